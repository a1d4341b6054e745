"""The settlement loop, which charges running leases when their periods fall due, and the
watch that rebuilds the balances in Redis after Redis lost them.

Each tick settles due leases in batches of ``settle_batch``, one unit of work per batch
(leases locked ``FOR UPDATE SKIP LOCKED``, so several billing instances share the work); the
unit refreshes the touched wallets' Redis read model after its commit. A failed batch rolls
back whole and is tried again on the next tick; its charges are posted under the same ids
then.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import asyncpg
from prometheus_client import Counter
from redis.exceptions import RedisError

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.service import settlement
from gpux_platform.metrics import LEASE_EVENTS, SETTLEMENT_SECONDS

log = logging.getLogger("gpux.billing.settler")

BALANCE_REBUILDS = Counter(
    "gpux_billing_balance_rebuilds_total",
    "Rebuilds of the wallets' balances in Redis from the ledger after Redis lost some.",
)


class Settler:
    """Runs ``settlement.settle_due`` every ``tick_s`` until cancelled."""

    def __init__(
        self,
        unit_of_work: Callable[[], PostgresBillingUnitOfWork],
        *,
        batch: int,
        tick_s: float,
    ) -> None:
        self._unit_of_work = unit_of_work
        self._batch = batch
        self._tick_s = tick_s

    async def tick(self) -> int:
        """Settle every lease due now; returns how many were looked at."""
        total = 0
        while True:
            started = time.perf_counter()
            async with self._unit_of_work() as uow:
                done = await settlement.settle_due(uow, self._batch)
                await uow.commit()
            SETTLEMENT_SECONDS.observe(time.perf_counter() - started)
            LEASE_EVENTS.labels("looked_at").inc(done.looked_at)
            if done.set_aside:
                LEASE_EVENTS.labels("set_aside").inc(done.set_aside)
            total += done.looked_at
            if done.looked_at < self._batch:
                return total

    async def run(self) -> None:
        """Tick until cancelled; an error is logged and the next tick tries again."""
        while True:
            try:
                await self.tick()
            except Exception as exc:  # a database hiccup must not end the loop
                log.warning("settlement failed; retrying", extra={"error": repr(exc)})
            await asyncio.sleep(self._tick_s)


async def watch_balances(
    lost: Callable[[], Awaitable[bool]],
    rebuild: Callable[[], Awaitable[None]],
    every_s: float,
) -> None:
    """Every ``every_s``, rebuild the wallets' balances in Redis from the ledger if Redis may
    have lost some (a refresh failed, or it restarted empty): a wallet that no longer changes
    would otherwise show what Redis lost, an empty balance list, for good."""
    while True:
        await asyncio.sleep(every_s)
        try:
            if await lost():
                await rebuild()
                BALANCE_REBUILDS.inc()
                log.info("balances rebuilt in Redis from the ledger")
        except (RedisError, OSError, asyncpg.PostgresError) as exc:
            log.warning("balances not rebuilt yet", extra={"error": repr(exc)})
