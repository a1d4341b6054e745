"""A partition's log on the real database: fenced against a stale owner, split from a legacy log,
migrated from a snapshot stored before capacity.

Two ``Partition`` objects for the same partition stand for two instances around a
rebalance: the one that has not noticed it lost the partition (stale engine) must not log
over the other; its transaction sees the newer head, rolls back, rebuilds and applies the
input to the real state. A partition with no log of its own starts from the single engine's
pre-partition (legacy) log, keeping only its own GPUs. A partition whose newest snapshot is of
the format before capacity (format 1) restores its offers as pools whose sold GPUs are leased
by leases it knows no id of; their ends give those GPUs back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from gpux_contracts.capacity import LeaseReleased
from gpux_contracts.events import Envelope, EventCodec, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.offers import (
    OfferAccepted,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawn,
    Tier,
)
from gpux_contracts.topics import CAPACITY_COMMANDS, OFFERS_STATUS, PRICING_OFFERS
from gpux_matching.adapters.postgres import SCHEMA
from gpux_matching.adapters.postgres.commands import PostgresCommandLog
from gpux_matching.adapters.postgres.unit_of_work import PostgresPartitionStore
from gpux_matching.bootstrap import MIGRATIONS
from gpux_matching.domain import AddOffer, SetFx, epoch_micros, partition_of
from gpux_matching.service import CAPACITY_HANDLERS, OFFER_HANDLERS
from gpux_matching.service.partition import LEGACY, Partition
from gpux_platform import migrations
from gpux_platform.clock import SystemClock
from gpux_platform.db import create_pool
from gpux_platform.settings import GpuxSettings

from ..legacy_book import format_1_offer, format_1_snapshot
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


def format_1_body(gpu: str, offer_id: str) -> dict[str, Any]:
    """The book's snapshot before capacity: one offer of 4 GPUs, 3 of them sold."""
    offer = format_1_offer(offer_id, "seller-1", gpu, "on_demand", 400_000)
    return format_1_snapshot(1, [offer])


async def stored_before_capacity(pool: asyncpg.Pool, number: int, gpu: str, offer_id: str) -> None:
    """Partition ``number`` as the book left it before capacity: its last command, a format 1
    snapshot after it, and the offer's owner."""
    async with pool.acquire() as conn, conn.transaction():
        commands = PostgresCommandLog(conn)
        await commands.lock_head(number)
        (seq,) = await commands.append(number, [SetFx(1, {})])
        await commands.save_snapshot(number, seq, json.dumps(format_1_body(gpu, offer_id)))
        await conn.execute(
            "INSERT INTO matching.offers (offer_id, seller_id, gpu, revision)"
            " VALUES ($1, 'seller-1', $2, 1)",
            offer_id,
            gpu,
        )


async def offer_reports(pool: asyncpg.Pool, offer_id: str) -> list[tuple[str, Any, Any, int]]:
    """(status, capacity, leased, free) of each ``offer.status_changed`` in the outbox."""
    codec: EventCodec[Any] = EventCodec(OfferStatusChanged)
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT body FROM matching.outbox WHERE topic = $1 ORDER BY seq", OFFERS_STATUS.name
        )
    payloads = [codec.decode(bytes(row["body"])).payload for row in rows]
    return [
        (p.status.value, p.capacity_gpus, p.leased_gpus, p.remaining_gpus)
        for p in payloads
        if p.offer_id == offer_id
    ]


async def test_a_partition_stored_before_capacity_migrates_and_gives_sold_gpus_back(
    pool: asyncpg.Pool,
) -> None:
    number = 1
    gpu, offer_id = gpu_in(number), new_id()
    await stored_before_capacity(pool, number, gpu, offer_id)
    part = partition(number, pool)
    await part.recover()
    view = part.engine.pool(offer_id)
    assert view is not None
    assert (view.capacity, view.leased, view.free) == (4, 3, 1)

    # A lease sold before the upgrade ends: the book knows no such id on the offer, and gives
    # its GPUs back from what the offer had sold.
    now = SystemClock().now()
    released = LeaseReleased(
        lease_id=new_id(),
        offer_id=offer_id,
        gpu=gpu,
        gpus=2,
        tier=Tier.ON_DEMAND,
        reason=LeaseEndReason.COMPLETED,
        ended_at=now,
    )
    event = wrap(released, producer="billing", occurred_at=now)
    outcome = await part.consume(CAPACITY_COMMANDS, [event], CAPACITY_HANDLERS)
    assert outcome.applied == 1
    view = part.engine.pool(offer_id)
    assert view is not None
    assert (view.capacity, view.leased, view.free) == (4, 1, 3)
    assert await offer_reports(pool, offer_id) == [("live", 4, 1, 3)]

    # Stored again, the partition is in the new format, and rebuilt from it the same book.
    await part.shutdown_snapshot()
    async with pool.acquire() as conn:
        stored = await PostgresCommandLog(conn).latest_snapshot(number)
    assert stored is not None
    assert stored[1]["format"] == 2
    again = partition(number, pool)
    await again.recover()
    assert again.engine.snapshot() == part.engine.snapshot()
