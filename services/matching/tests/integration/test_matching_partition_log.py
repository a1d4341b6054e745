"""A partition's log on the real database: fenced against a stale owner, split from a legacy log.

Two ``Partition`` objects for the same partition stand for two instances around a
rebalance: the one that has not noticed it lost the partition (stale engine) must not log
over the other; its transaction sees the newer head, rolls back, rebuilds and applies the
input to the real state. A partition with no log of its own starts from the single engine's
pre-partition (legacy) log, keeping only its own GPUs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.offers import (
    OfferAccepted,
    OfferSubmitted,
    OfferWithdrawn,
)
from gpux_contracts.topics import PRICING_OFFERS
from gpux_matching.adapters.postgres import SCHEMA
from gpux_matching.adapters.postgres.commands import PostgresCommandLog
from gpux_matching.adapters.postgres.unit_of_work import PostgresPartitionStore
from gpux_matching.bootstrap import MIGRATIONS
from gpux_matching.domain import AddOffer, epoch_micros, partition_of
from gpux_matching.service import OFFER_HANDLERS
from gpux_matching.service.partition import LEGACY, Partition
from gpux_platform import migrations
from gpux_platform.clock import SystemClock
from gpux_platform.db import create_pool
from gpux_platform.settings import GpuxSettings

from .matching_feed import offer

PARTITIONS = 6


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(module_settings)
    await migrations.apply(pool, SCHEMA, MIGRATIONS)
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
    return offer(gpu, "0.40", 2)


def envelope(payload: Any) -> Envelope[Any]:
    return wrap(payload, producer="pricing", occurred_at=SystemClock().now())


def partition(number: int, pool: asyncpg.Pool) -> Partition:
    return Partition(
        number,
        store=PostgresPartitionStore(pool),
        clock=SystemClock(),
        snapshot_every=1000,
        partitions=PARTITIONS,
    )


async def consumed(part: Partition, event: Envelope[Any]) -> bool:
    """Whether the partition applied the input (False: it had seen it before)."""
    outcome = await part.consume(PRICING_OFFERS, [event], OFFER_HANDLERS)
    return outcome.applied == 1


async def test_a_stale_owner_rebuilds_instead_of_logging_over_the_new_one(
    pool: asyncpg.Pool,
) -> None:
    number = 2
    offer = submitted(gpu_in(number))
    new_owner = partition(number, pool)
    stale = partition(number, pool)
    await new_owner.recover()
    await stale.recover()  # built before the new owner logs anything

    added = envelope(OfferAccepted(offer=offer, revision=1))
    assert await consumed(new_owner, added)
    assert stale.engine.offer(offer.offer_id) is None  # it has not seen the offer

    # With its stale engine the withdrawal would find nothing to withdraw; fenced, the
    # transaction rolls back, the engine is rebuilt and the offer is withdrawn.
    gone = envelope(OfferWithdrawn(offer_id=offer.offer_id, seller_id="seller-1", gpu=offer.gpu))
    assert await consumed(stale, gone)
    assert stale.engine.offer(offer.offer_id) is None
    async with pool.acquire() as conn:
        log = await PostgresCommandLog(conn).commands_after(number, 0)
        assert [type(c).__name__ for _, c in log] == ["AddOffer", "WithdrawOffer"]
        assert await PostgresCommandLog(conn).head(number) == log[-1][0]

    # The other way round too: the first one is now behind and rebuilds on its next input.
    again = envelope(OfferAccepted(offer=submitted(offer.gpu), revision=1))
    assert await consumed(new_owner, again)
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
            await PostgresCommandLog(conn).append(LEGACY, [command])
    part = partition(4, pool)
    await part.recover()
    assert part.engine.offer(ids[mine]) is not None
    assert part.engine.offer(ids[other]) is None
    await part.shutdown_snapshot()  # the legacy start becomes the partition's own snapshot
    async with pool.acquire() as conn:
        assert await PostgresCommandLog(conn).latest_snapshot(4) is not None
