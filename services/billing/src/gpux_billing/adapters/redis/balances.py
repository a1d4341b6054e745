"""The wallets' Redis read model: hash ``balances:<account>``, field currency -> BalanceChanged.

Written only after the ledger change committed, and from a fresh read of the ledger rather
than from the handler's result: a later commit's refresh can then never be overwritten by
an earlier one that finished after it (short of a read-write interleaving between two
refreshes of the same wallet, which the next change of that wallet repairs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from redis.asyncio import Redis

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain.ledger import Wallet
from gpux_billing.service.ledger import balance_changed
from gpux_billing.service.unit_of_work import Ledger
from gpux_platform.clock import Clock
from gpux_platform.redis_keys import BALANCES, BILLING_READ_MODELS
from gpux_platform.settings import GpuxSettings

REBUILD_CHUNK = 500


async def refresh(
    ledger: Ledger,
    redis: Redis,
    settings: GpuxSettings,
    wallets: Sequence[Wallet],
    now: datetime,
) -> None:
    """Copy the current balances of the wallets to Redis (one query, one pipeline)."""
    unique = sorted(set(wallets))
    if not unique:
        return
    pipe = redis.pipeline(transaction=False)
    for wallet, (available, held) in (await ledger.wallet_balances(unique)).items():
        payload = balance_changed(wallet, available, held, now)
        key = settings.redis_key(BALANCES, payload.account_id)
        pipe.hset(key, payload.currency.value, payload.model_dump_json())
    await pipe.execute()


@dataclass
class Watch:
    """Whether Redis may have lost a balance since the last rebuild: a refresh failed (Redis
    down), or the mark a rebuild leaves is gone (Redis restarted empty, flushed)."""

    failed_writes: int = 0
    rebuilt_after: int | None = None
    """``failed_writes`` when the last finished rebuild began (None: none yet)."""

    def failed(self) -> None:
        """A refresh did not reach Redis."""
        self.failed_writes += 1

    async def lost(self, redis: Redis, settings: GpuxSettings) -> bool:
        """Whether the balances must be rebuilt."""
        if self.rebuilt_after is None or self.failed_writes > self.rebuilt_after:
            return True
        return not await redis.exists(settings.redis_key(BILLING_READ_MODELS))


async def rebuild(
    pool: asyncpg.Pool,
    redis: Redis,
    settings: GpuxSettings,
    clock: Clock,
    watch: Watch | None = None,
) -> None:
    """Refresh every wallet that has an available or held account (at start, and whenever the
    watch says Redis lost balances), then leave the mark that they are there."""
    failed_writes = 0 if watch is None else watch.failed_writes
    async with pool.acquire() as conn:
        ledger = PostgresLedger(conn)
        wallets = await ledger.wallets()
        for start in range(0, len(wallets), REBUILD_CHUNK):
            chunk = wallets[start : start + REBUILD_CHUNK]
            await refresh(ledger, redis, settings, chunk, clock.now())
    await redis.set(settings.redis_key(BILLING_READ_MODELS), clock.now().isoformat())
    if watch is not None:
        watch.rebuilt_after = failed_writes
