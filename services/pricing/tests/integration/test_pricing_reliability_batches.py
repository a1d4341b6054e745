"""Sellers' reliability on real PostgreSQL, Kafka and Redis.

A batch of ``reliability.changed`` costs the same round trips whatever its size: the unit
keeps its counts in one statement, finds the sellers' books in one query and reads the
quotes' sellers' counts in one more, none per event. Pricing's real subscriber of
``billing.reliability`` (its own group) keeps each seller's largest counts whatever order a
seller's events on different partitions arrive in, and the quotes it republishes, in the
outbox, in Redis and on the price stream, show them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import BILLING_RELIABILITY, PRICING_BEST_ASKS, REGISTRY
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import committed_offsets, publish
from gpux_devinfra.testing.payloads import offer_submitted
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.clock import ManualClock, SystemClock
from gpux_platform.redis_keys import BEST_ASKS, PRICES_STREAM
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.adapters.redis.read_models import RedisReadModels
from gpux_pricing.bootstrap import MIGRATIONS
from gpux_pricing.config import PricingSettings
from gpux_pricing.entrypoints.kafka import group_of
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import Decision

from ..reliability_events import counts, reliability_changed
from .pricing_round_trips import apply, counting, units
from .pricing_subscribers import pricing_settings, subscribed

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SELLERS = 200


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, "pricing", MIGRATIONS) as pool:
        yield pool


def changed(seller_id: str, seller: ReliabilityCounts, offer_id: str) -> Envelope[Any]:
    return reliability_changed(seller_id, seller, offer_id, at=NOW)


async def on_book(unit: PostgresPricingUnitOfWork, offers: list[OfferSubmitted]) -> None:
    """What pricing knows before the counts come: these offers accepted and live, whole."""
    async with unit as uow:
        for o in offers:
            await uow.offers.save(o, Decision(1, OfferStatus.ACCEPTED), uow.now())
            await uow.offers.set_book_state(o.offer_id, OfferStatus.LIVE, o.gpus, uow.now())
        await uow.commit()


async def test_a_batch_of_counts_costs_the_same_round_trips_whatever_its_size(
    pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    clock = ManualClock(NOW)
    offers = [
        offer_submitted(
            f"{tag}-o{i}",
            seller_id=f"{tag}-s{i}",
            gpu=f"{tag}-gpu{i % 2}",
            price=f"0.{30 + i % 40}",
            currency=Currency.EUR,
        )
        for i in range(SELLERS)
    ]
    await on_book(units(pool, clock)(), offers)
    round_trips = {}
    async with counting(pool, clock) as (counted_units, counted):
        # Both books are read into this process's memory once, before what is counted.
        warm = [changed(o.seller_id, counts(1), o.offer_id) for o in offers[:2]]
        await apply(counted_units, BILLING_RELIABILITY, warm)
        for size, ready in ((20, 2), (SELLERS, 3)):
            events = [changed(o.seller_id, counts(ready), o.offer_id) for o in offers[:size]]
            before = counted.round_trips
            outcome = await apply(counted_units, BILLING_RELIABILITY, events)
            assert (outcome.applied, outcome.units) == (size, 1)
            round_trips[size] = counted.round_trips - before
    assert round_trips[20] == round_trips[SELLERS] < 10, round_trips  # none per event
    held = await pool.fetchval(
        "SELECT count(*) FROM pricing.seller_reliability"
        " WHERE seller_id LIKE $1 AND ready_in_time = 3",
        f"{tag}-%",
    )
    assert held == SELLERS
    rows = await pool.fetch(
        "SELECT key, body FROM pricing.outbox WHERE topic = $1 AND key LIKE $2 ORDER BY seq",
        PRICING_BEST_ASKS.name,
        f"{tag}-%",
    )
    codec: EventCodec[BestAskChanged] = EventCodec(BestAskChanged)
    last = {row["key"]: codec.decode(row["body"]).payload for row in rows}
    assert sorted(last) == [f"{tag}-gpu0|on_demand|*", f"{tag}-gpu1|on_demand|*"]
    for quote in last.values():
        assert quote.best is not None
        assert quote.best.seller_reliability == counts(3)
        assert all(level.min_reliability == 1 for level in quote.depth)


async def consume(
    settings: PricingSettings,
    pool: asyncpg.Pool,
    unit: Callable[[], PostgresPricingUnitOfWork],
    events: list[Envelope[Any]],
) -> None:
    """Publish the counts, each keyed by its offer, and run pricing's subscribers until all
    are claimed and their offsets committed (its own group, after the transactions)."""
    await ensure_topics(settings, REGISTRY)
    await publish(settings, BILLING_RELIABILITY, [(e.payload.offer_id, e) for e in events])
    async with subscribed(settings, unit):

        async def applied() -> bool:
            claimed = await pool.fetchval(
                "SELECT count(*) FROM pricing.inbox WHERE event_id = ANY($1::text[])",
                [e.event_id for e in events],
            )
            return bool(claimed == len(events))

        async def committed() -> bool:
            offsets = await committed_offsets(settings, group_of(BILLING_RELIABILITY.name))
            return bool(sum(max(o.offset, 0) for o in offsets.values()) == len(events))

        await eventually(applied, what="every count claimed")
        await eventually(committed, what="the offsets of every count committed")


async def test_the_subscriber_keeps_each_sellers_largest_counts_and_shows_them(
    module_settings: GpuxSettings, pool: asyncpg.Pool
) -> None:
    settings = pricing_settings(module_settings)
    redis = Redis.from_url(settings.redis_url)
    cache, models = BookCache(), RedisReadModels(redis, settings)

    def unit() -> PostgresPricingUnitOfWork:
        return PostgresPricingUnitOfWork(
            pool, cache=cache, read_models=models, clock=SystemClock(), band_for=settings.band_for
        )

    tag = new_id()[-8:].lower()
    gpu, book = f"{tag}-gpu", f"{tag}-gpu|on_demand|*"
    offers = [
        offer_submitted(f"{tag}-o{i}", seller_id="s1", gpu=gpu, currency=Currency.EUR)
        for i in range(3)
    ]
    await on_book(unit(), offers)
    # The seller's counts after each of three leases, each keyed by its own offer: on
    # different partitions, so they may be applied in any order.
    steps = [counts(1), counts(1, 1), counts(2, 1)]
    events = [changed("s1", c, o.offer_id) for c, o in zip(steps, offers, strict=True)]
    await consume(settings, pool, unit, events)

    held = await pool.fetchrow("SELECT * FROM pricing.seller_reliability WHERE seller_id = 's1'")
    assert (held["ready_in_time"], held["failed"], held["reclaimed"]) == (2, 1, 0)
    bodies = await pool.fetch(
        "SELECT body FROM pricing.outbox WHERE topic = $1 AND key = $2 ORDER BY seq",
        PRICING_BEST_ASKS.name,
        book,
    )
    codec: EventCodec[BestAskChanged] = EventCodec(BestAskChanged)
    last = codec.decode(bodies[-1]["body"]).payload
    assert last.best is not None
    assert last.best.seller_reliability == counts(2, 1)
    raw = await redis.hget(settings.redis_key(BEST_ASKS), book)
    assert raw is not None
    shown = json.loads(raw)
    streamed = await redis.xrevrange(settings.redis_key(PRICES_STREAM), count=50) or []
    await redis.aclose()
    expected = {"ready_in_time": 2, "failed": 1, "reclaimed": 0}
    assert shown["best"]["seller_reliability"] == expected
    assert shown["depth"][0]["reliability"] == expected
    assert shown["depth"][0]["min_reliability"] == "0.6666"
    of_book = [json.loads(data[b"data"]) for _, data in streamed if data is not None]
    newest = next(q for q in of_book if q["gpu"] == gpu)
    assert newest["best"]["seller_reliability"] == expected
