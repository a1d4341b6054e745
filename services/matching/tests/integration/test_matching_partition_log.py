"""A partition's log on the real database: fenced against a stale owner, split from a legacy log.

Two ``Partition`` objects for the same partition stand for two instances around a
rebalance: the one that has not noticed it lost the partition (stale engine) must not log
over the other; its transaction sees the newer head, rolls back, rebuilds and applies the
input to the real state. A partition with no log of its own starts from the single engine's
pre-partition (legacy) log, keeping only its own GPUs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferAccepted,
    OfferSubmitted,
    OfferWithdrawn,
    Tier,
)
from gpux_matching import handlers
from gpux_matching.adapters import store
from gpux_matching.bootstrap import MIGRATIONS
from gpux_matching.domain import AddOffer, epoch_micros
from gpux_matching.partition import Partition, partition_of
from gpux_platform import migrations
from gpux_platform.clock import SystemClock
from gpux_platform.db import create_pool
from gpux_platform.settings import GpuxSettings

PARTITIONS = 6


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(module_settings)
    await migrations.apply(pool, handlers.SCHEMA, MIGRATIONS)
    try:
        yield pool
    finally:
        await pool.close()


def gpu_in(partition: int) -> str:
    suffix = new_id()[:8]
    for i in range(1000):
        if partition_of(f"fence-{suffix}-{i}", PARTITIONS) == partition:
            return f"fence-{suffix}-{i}"
    raise AssertionError(partition)


def submitted(gpu: str) -> OfferSubmitted:
    return OfferSubmitted(
        offer_id=new_id(),
        seller_id="seller-1",
        gpu=gpu,
        gpus=2,
        price_per_gpu_hour=Decimal("0.40"),
        currency=Currency("EUR"),
        tier=Tier.ON_DEMAND,
        billing=BillingGranularity.HOUR,
    )


def envelope(payload: Any) -> Envelope[Any]:
    return wrap(payload, producer="pricing", occurred_at=SystemClock().now())


async def test_a_stale_owner_rebuilds_instead_of_logging_over_the_new_one(
    pool: asyncpg.Pool,
) -> None:
    number = 2
    offer = submitted(gpu_in(number))
    new_owner = Partition(number, pool, SystemClock(), 1000, PARTITIONS)
    stale = Partition(number, pool, SystemClock(), 1000, PARTITIONS)
    await new_owner.recover()
    await stale.recover()  # built before the new owner logs anything

    added = envelope(OfferAccepted(offer=offer, revision=1))
    assert await new_owner.consume(
        "pricing.offers", added, lambda conn, part: handlers.plan_accepted(conn, part, added)
    )
    assert stale.engine.offer(offer.offer_id) is None  # it has not seen the offer

    # With its stale engine the withdrawal would find nothing to withdraw; fenced, the
    # transaction rolls back, the engine is rebuilt and the offer is withdrawn.
    gone = envelope(OfferWithdrawn(offer_id=offer.offer_id, seller_id="seller-1", gpu=offer.gpu))
    assert await stale.consume(
        "pricing.offers", gone, lambda conn, part: handlers.plan_withdrawn(conn, part, gone)
    )
    assert stale.engine.offer(offer.offer_id) is None
    async with pool.acquire() as conn:
        log = await store.commands_after(conn, number, 0)
        assert [type(c).__name__ for _, c in log] == ["AddOffer", "WithdrawOffer"]
        assert await store.head(conn, number) == log[-1][0]

    # The other way round too: the first one is now behind and rebuilds on its next input.
    again = envelope(OfferAccepted(offer=submitted(offer.gpu), revision=1))
    assert await new_owner.consume(
        "pricing.offers", again, lambda conn, part: handlers.plan_accepted(conn, part, again)
    )
    assert new_owner.engine.offer(offer.offer_id) is None
    assert new_owner.engine.offer(again.payload.offer.offer_id) is not None


async def test_a_partition_without_a_log_starts_from_its_share_of_the_legacy_book(
    pool: asyncpg.Pool,
) -> None:
    mine, other = gpu_in(4), gpu_in(5)
    now = epoch_micros(SystemClock().now())
    ids = {}
    async with pool.acquire() as conn, conn.transaction():
        for gpu in (mine, other):
            ids[gpu] = new_id()
            command = AddOffer(
                now=now,
                offer_id=ids[gpu],
                seller_id="seller-1",
                gpu=gpu,
                tier="on_demand",
                price_micros=400_000,
                currency="EUR",
                gpus=2,
                billing="hour",
                region=None,
                min_hours=None,
                available_until=None,
            )
            await store.append_command(conn, store.LEGACY, command)
    part = Partition(4, pool, SystemClock(), 1000, PARTITIONS)
    await part.recover()
    assert part.engine.offer(ids[mine]) is not None
    assert part.engine.offer(ids[other]) is None
    await part.shutdown_snapshot()  # the legacy start becomes the partition's own snapshot
    async with pool.acquire() as conn:
        assert await store.latest_snapshot(conn, 4) is not None
