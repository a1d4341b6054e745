"""The wallets' Redis read model: hash ``balances:<account>``, field currency -> BalanceChanged.

Written only after the ledger change committed, and from a fresh read of the ledger rather
than from the handler's result: a later commit's refresh can then never be overwritten by
an earlier one that finished after it (short of a read-write interleaving between two
refreshes of the same wallet, which the next change of that wallet repairs).
"""

from __future__ import annotations

from collections.abc import Iterable

import asyncpg
from redis.asyncio import Redis

from gpux_billing.handlers import Wallet, balances_changed
from gpux_contracts.money import Currency
from gpux_platform.clock import Clock
from gpux_platform.redis_keys import BALANCES
from gpux_platform.settings import GpuxSettings


async def to_redis(
    pool: asyncpg.Pool,
    redis: Redis,
    settings: GpuxSettings,
    clock: Clock,
    touched: Iterable[Wallet],
) -> None:
    """Copy the current balances of the touched wallets to Redis."""
    unique = sorted(set(touched))
    if not unique:
        return
    now = clock.now()
    pipe = redis.pipeline(transaction=False)
    async with pool.acquire() as conn:
        for payload in await balances_changed(conn, unique, now):
            key = settings.redis_key(BALANCES, payload.account_id)
            pipe.hset(key, payload.currency.value, payload.model_dump_json())
    await pipe.execute()


async def rebuild(pool: asyncpg.Pool, redis: Redis, settings: GpuxSettings, clock: Clock) -> None:
    """At start: refresh every wallet that has an available or held account."""
    rows = await pool.fetch(
        "SELECT DISTINCT owner, currency FROM billing.accounts WHERE kind IN ('available', 'held')"
    )
    wallets = [(r["owner"], Currency(r["currency"])) for r in rows]
    for start in range(0, len(wallets), 500):
        await to_redis(pool, redis, settings, clock, wallets[start : start + 500])
