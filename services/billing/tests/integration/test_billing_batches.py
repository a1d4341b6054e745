"""Billing's real subscribers on Kafka and PostgreSQL: a burst of records is one unit of work
(one transaction) and one offset commit; a record that never applies is set aside alone.

The records are on the broker before billing's subscribers start, so the first fetch of
``billing.commands`` has them all. Units of work are counted on a subclass of billing's own
PostgreSQL unit of work, offset commits on ``AIOKafkaConsumer.commit`` by consumer group.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal
from functools import partial
from typing import Any, ClassVar

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.bootstrap import MIGRATIONS
from gpux_billing.config import BillingSettings
from gpux_billing.entrypoints.kafka import GROUPS, billing_router
from gpux_billing.service import HANDLERS_BY_TOPIC
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import publish
from gpux_devinfra.testing.payloads import credit_requested
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics, make_broker
from gpux_platform.clock import SystemClock
from gpux_platform.redis_keys import BALANCES
from gpux_platform.settings import GpuxSettings

BURST = 200
BUYERS = 20


class CountedUnitOfWork(PostgresBillingUnitOfWork):
    """Billing's unit of work, counting the units that committed."""

    commits: ClassVar[int] = 0

    async def commit(self) -> None:
        await super().commit()
        CountedUnitOfWork.commits += 1


@pytest.fixture(scope="module")
def settings(module_settings: GpuxSettings) -> BillingSettings:
    values = {**module_settings.model_dump(), "database_url": module_settings.database_url}
    return BillingSettings(**values)


@pytest.fixture(scope="module")
async def pool(settings: BillingSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(settings, "billing", MIGRATIONS) as pool:
        await ensure_topics(settings, list(HANDLERS_BY_TOPIC))
        yield pool


def credit(n: int, tag: str, account: str | None = None) -> Envelope[Any]:
    buyer = account or f"{tag}-buyer-{n % BUYERS}"
    payload = credit_requested(buyer, "1.25", credit_id=f"{tag}-{n}", reference="batch test")
    return wrap(payload, producer="gateway", occurred_at=SystemClock().now())


async def consume(
    settings: BillingSettings, pool: asyncpg.Pool, done: Callable[[], Awaitable[bool]]
) -> None:
    """Run billing's subscribers until ``done``, then a moment more for the offset commit."""
    redis = Redis.from_url(settings.redis_url)
    unit_of_work = partial(
        CountedUnitOfWork,
        pool,
        rules=settings.rules(),
        clock=SystemClock(),
        redis=redis,
        settings=settings,
    )
    broker = make_broker(settings, "billing-batches-test")
    broker.include_router(billing_router(settings, unit_of_work))
    await broker.start()
    try:
        await eventually(done, what="the batch applied")
        await asyncio.sleep(1.0)  # the offset commit follows the transaction's
    finally:
        await broker.stop()
        await redis.aclose()


async def booked(pool: asyncpg.Pool, tag: str) -> int:
    return int(
        await pool.fetchval(
            "SELECT count(*) FROM billing.transfers WHERE id LIKE 'credit:' || $1 || '-%'", tag
        )
    )


async def test_a_burst_of_commands_is_one_transaction_and_one_offset_commit(
    settings: BillingSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    burst = [credit(n, "burst") for n in range(BURST)]
    await publish(settings, BILLING_COMMANDS, [("one-partition", e) for e in burst])
    CountedUnitOfWork.commits = 0

    async def all_booked() -> bool:
        return await booked(pool, "burst") == BURST

    await consume(settings, pool, all_booked)
    assert CountedUnitOfWork.commits == 1
    assert offset_commits == [settings.group(GROUPS[BILLING_COMMANDS])]
    # Its events went to the outbox with it: one ledger.posted per credit, one balance each.
    kinds = await pool.fetch("SELECT topic, count(*) AS n FROM billing.outbox GROUP BY topic")
    assert {r["topic"]: r["n"] for r in kinds} == {
        "billing.ledger": BURST,
        "billing.balances": BURST,
    }
    # The read model followed the commit: every buyer's balance is in Redis.
    redis = Redis.from_url(settings.redis_url)
    try:
        cached = [
            await redis.hget(settings.redis_key(BALANCES, f"burst-buyer-{b}"), "USD")
            for b in range(BUYERS)
        ]
    finally:
        await redis.aclose()
    per_buyer = f"{Decimal('1.25') * BURST / BUYERS:.2f}"
    assert [json.loads(c)["available"] if c else None for c in cached] == [per_buyer] * BUYERS


async def test_a_record_that_never_applies_is_set_aside_and_the_batch_committed_once(
    settings: BillingSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    burst = [credit(n, "poison") for n in range(64)]
    burst[41] = credit(41, "poison", account="no spaces allowed")  # the ledger refuses the owner
    await publish(settings, BILLING_COMMANDS, [("one-partition", e) for e in burst])
    CountedUnitOfWork.commits = 0

    async def rest_booked() -> bool:
        return await booked(pool, "poison") == 63

    await consume(settings, pool, rest_booked)
    rows = await pool.fetch("SELECT event_id, error FROM billing.set_aside")
    assert [r["event_id"] for r in rows] == [burst[41].event_id]
    assert "owner_invalid" in rows[0]["error"]
    assert offset_commits == [settings.group(GROUPS[BILLING_COMMANDS])]
    assert CountedUnitOfWork.commits > 1  # split down to the bad record
