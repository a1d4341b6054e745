"""Pricing's read models come back by themselves after Redis restarts empty, with no change to
the books and no restart of pricing (found by the chaos suite: a book left alone after a Redis
restart had no best ask in GET /v1/prices for good, while the book itself showed its offers).

Pricing runs on a Redis of this test's own (the shared one is never restarted). A book gets one
live offer, whose quote pricing writes to ``prices:best``; Redis is restarted (it keeps nothing:
no persistence); the quote is back within a few seconds, rebuilt from PostgreSQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus
from gpux_contracts.topics import OFFERS_STATUS, REGISTRY
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import publish
from gpux_devinfra.testing.payloads import GPU, offer_status, offer_submitted
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.stores import PrivateStore
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.clock import SystemClock
from gpux_platform.redis_keys import BEST_ASKS
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.bootstrap import MIGRATIONS, SPEC
from gpux_pricing.config import PricingSettings
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import Decision

QUOTE = f"{GPU}|on_demand|*"


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, "pricing", MIGRATIONS) as pool:
        yield pool


async def _quoted(url: str, settings: GpuxSettings) -> bool:
    """Whether ``prices:best`` holds the offer's quote (asked on a connection of its own: the
    restart closes the ones made before it)."""
    redis = Redis.from_url(url)
    try:
        shown = await redis.hget(settings.redis_key(BEST_ASKS), QUOTE)
    finally:
        await redis.aclose()
    return shown is not None and '"offer_id":"restart-1"' in (
        shown.decode() if isinstance(shown, bytes) else str(shown)
    )


async def test_the_best_asks_are_rebuilt_after_redis_restarts_empty(
    module_settings: GpuxSettings, pool: asyncpg.Pool, private_redis: PrivateStore
) -> None:
    offer = offer_submitted("restart-1", price=Decimal("0.70"), currency=Currency.EUR)
    settings = PricingSettings(
        **{**module_settings.model_dump(), "database_url": module_settings.database_url}
    )
    unit = PostgresPricingUnitOfWork(
        pool,
        cache=BookCache(),
        read_models=MemoryReadModels(),
        clock=SystemClock(),
        band_for=settings.band_for,
    )
    async with unit as uow:  # pricing accepted the offer
        await uow.offers.save(offer, Decision(1, OfferStatus.ACCEPTED), uow.now())
        await uow.commit()
    await ensure_topics(module_settings, REGISTRY)
    async with running(SPEC, module_settings, redis_url=private_redis.url) as service:
        url = private_redis.url
        live = offer_status(offer.offer_id, OfferStatus.LIVE, 4)
        report = wrap(live, producer="matching", occurred_at=SystemClock().now())
        await publish(module_settings, OFFERS_STATUS, [(GPU, report)])
        await eventually(lambda: _quoted(url, service.settings), what="the quote")

        await private_redis.restart()
        assert not await _quoted(url, service.settings)  # Redis kept nothing

        await eventually(
            lambda: _quoted(url, service.settings),
            what="the quote rebuilt without any change to the book",
            timeout_s=15,
        )
