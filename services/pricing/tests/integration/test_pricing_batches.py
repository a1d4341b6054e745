"""A burst of the book's reports on real Kafka, PostgreSQL and Redis: pricing's real subscriber
applies it in one unit of work (one transaction), commits the offsets once, and sends one
``best_ask.changed`` per book with its latest state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_contracts.events import Envelope, EventCodec, wrap
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import OFFERS_STATUS, PRICING_BEST_ASKS, REGISTRY
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import publish
from gpux_devinfra.testing.payloads import GPU, offer_status, offer_submitted
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.clock import SystemClock
from gpux_platform.redis_keys import BEST_ASKS, PRICES_STREAM
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.adapters.redis.read_models import RedisReadModels
from gpux_pricing.bootstrap import MIGRATIONS
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.fx import Rate
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import Decision

from .pricing_subscribers import pricing_settings, subscribed

PER_BOOK = 30
"""Offers per book; each is reported live, then partly filled: 2 x 30 x 2 = 120 records."""
ON_DEMAND, INTERRUPTIBLE = f"{GPU}|on_demand|*", f"{GPU}|interruptible|*"


class CountedUnit(PostgresPricingUnitOfWork):
    """Pricing's real unit of work, counting the transactions it commits."""

    commits = 0

    async def commit(self) -> None:
        await super().commit()
        CountedUnit.commits += 1


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, "pricing", MIGRATIONS) as pool:
        yield pool


def offer(n: int, tier: Tier) -> OfferSubmitted:
    return offer_submitted(
        f"{tier.value}-{n:03d}",
        price=Decimal("0.30") + Decimal(n) / 100,
        currency=Currency.EUR if n % 2 else Currency.USD,
        tier=tier,
    )


def report(offer: OfferSubmitted, left: int) -> Envelope[Any]:
    payload = offer_status(offer.offer_id, OfferStatus.LIVE, left)
    return wrap(payload, producer="matching", occurred_at=SystemClock().now())


async def seed(unit: CountedUnit, offers: list[OfferSubmitted]) -> None:
    """What pricing knows before the book reports: a USD rate and the accepted offers."""
    async with unit as uow:
        as_of = datetime(2026, 11, 1, tzinfo=UTC)
        await uow.rates.upsert(Rate(Currency.USD, Currency.EUR, Decimal("0.92"), as_of))
        for o in offers:
            await uow.offers.save(o, Decision(1, OfferStatus.ACCEPTED), uow.now())
        await uow.commit()


async def consume(
    settings: PricingSettings,
    pool: asyncpg.Pool,
    unit: Callable[[], CountedUnit],
    reports: list[Envelope[Any]],
) -> None:
    """Publish every report, then run pricing's subscribers until all are claimed."""
    # Every report is on the broker before the subscriber starts: its first fetch has them all
    # (one key, so one partition, in order).
    await ensure_topics(settings, REGISTRY)
    await publish(settings, OFFERS_STATUS, [(GPU, e) for e in reports])
    async with subscribed(settings, unit):

        async def applied() -> bool:
            claimed = await pool.fetchval(
                "SELECT count(*) FROM pricing.inbox WHERE topic = $1", OFFERS_STATUS.name
            )
            return bool(claimed == len(reports))

        await eventually(applied, what="every report claimed")
        await asyncio.sleep(0.5)  # the offset commit follows the transaction's


async def test_a_burst_of_reports_is_one_transaction_one_offset_commit_one_quote_per_book(
    module_settings: GpuxSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    settings = pricing_settings(module_settings)
    redis = Redis.from_url(settings.redis_url)
    cache, models = BookCache(), RedisReadModels(redis, settings)

    def unit() -> CountedUnit:
        clock = SystemClock()
        return CountedUnit(
            pool, cache=cache, read_models=models, clock=clock, band_for=settings.band_for
        )

    offers = [offer(n, tier) for tier in Tier for n in range(PER_BOOK)]
    await seed(unit(), offers)
    reports = [report(o, 4) for o in offers] + [
        report(o, 4 - o_n % 3) for o_n, o in enumerate(offers)
    ]
    CountedUnit.commits = 0
    await consume(settings, pool, unit, reports)

    assert CountedUnit.commits == 1
    assert len(offset_commits) == 1
    rows = await pool.fetch(
        "SELECT key, body FROM pricing.outbox WHERE topic = $1 ORDER BY seq",
        PRICING_BEST_ASKS.name,
    )
    assert sorted(r["key"] for r in rows) == [INTERRUPTIBLE, ON_DEMAND]
    codec: EventCodec[BestAskChanged] = EventCodec(BestAskChanged)
    for row in rows:
        quote: BestAskChanged = codec.decode(row["body"]).payload
        assert quote.best is not None
        assert quote.best.offer_id.endswith("-000")  # 0.30 USD = 0.276 EUR, the cheapest
        assert quote.best.gpus == 4  # its last report: 4 - 0 % 3
        assert len(quote.depth) == 20  # the 20 cheapest levels of about 30
    shown = await redis.hgetall(settings.redis_key(BEST_ASKS))
    streamed = await redis.xlen(settings.redis_key(PRICES_STREAM))
    await redis.aclose()
    assert sorted(k.decode() if isinstance(k, bytes) else k for k in shown) == [
        INTERRUPTIBLE,
        ON_DEMAND,
    ]
    assert streamed == 2
