"""The settlement loop: charges running leases when their periods fall due.

Each tick settles due leases in batches of ``settle_batch``, one transaction per batch
(leases locked ``FOR UPDATE SKIP LOCKED``, so several billing instances share the work),
then refreshes the touched wallets' Redis read model. A failed batch rolls back whole and
is tried again on the next tick; its charges are posted under the same ids then.
"""

from __future__ import annotations

import asyncio
import logging
import time

from gpux_billing import read_model, settlement
from gpux_billing.config import BillingSettings
from gpux_platform.metrics import LEASE_EVENTS, SETTLEMENT_SECONDS
from gpux_platform.service import Runtime

log = logging.getLogger("gpux.billing.settler")


class Settler:
    """Runs ``settlement.settle_due`` every ``settle_tick_s`` until cancelled."""

    def __init__(
        self, runtime: Runtime, settings: BillingSettings, rules: settlement.Rules
    ) -> None:
        self._runtime = runtime
        self._settings = settings
        self._rules = rules

    async def tick(self) -> int:
        """Settle every lease due now; returns how many were looked at."""
        runtime, settings = self._runtime, self._settings
        total = 0
        while True:
            started = time.perf_counter()
            now = runtime.clock.now()
            async with runtime.pool.acquire() as conn, conn.transaction():
                seen, touched = await settlement.settle_due(
                    conn, now, self._rules, settings.settle_batch
                )
            SETTLEMENT_SECONDS.observe(time.perf_counter() - started)
            LEASE_EVENTS.labels("looked_at").inc(seen)
            total += seen
            if touched:
                await read_model.to_redis(
                    runtime.pool, runtime.redis, settings, runtime.clock, touched
                )
            if seen < settings.settle_batch:
                return total

    async def run(self) -> None:
        """Tick until cancelled; an error is logged and the next tick tries again."""
        while True:
            try:
                await self.tick()
            except Exception as exc:  # a database hiccup must not end the loop
                log.warning("settlement failed; retrying", extra={"error": repr(exc)})
            await asyncio.sleep(self._settings.settle_tick_s)
