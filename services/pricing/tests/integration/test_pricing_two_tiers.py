"""One pool, two tiers, on real Kafka, PostgreSQL and Redis: pricing (the service, started as
``python -m gpux_pricing`` would) accepts an on-demand offer with an interruptible price, and
as the book reports the offer's free GPUs (leased, exhausted, returned) both tiers' best asks
and depth in Redis follow them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from decimal import Decimal

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_contracts.events import EventCodec
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferAccepted, OfferStatus
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import OFFERS_COMMANDS, OFFERS_STATUS, PRICING_OFFERS, REGISTRY
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.kafka import publish_payloads, records_to_end
from gpux_devinfra.testing.payloads import GPU, offer_status, offer_submitted
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.redis_keys import BEST_ASKS
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import MIGRATIONS, SPEC

pytestmark = pytest.mark.integration

OFFER = offer_submitted(
    "two-tiers-1",
    price="0.40",
    currency=Currency.EUR,
    gpus=4,
    interruptible_price_per_gpu_hour=Decimal("0.25"),
    interruption_notice_seconds=600,
)
ON_DEMAND, INTERRUPTIBLE = f"{GPU}|on_demand|*", f"{GPU}|interruptible|*"
Shown = tuple[str | None, Decimal | None, list[int]]
"""A quote as the test reads it: best offer id, best price, GPUs per level."""


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, "pricing", MIGRATIONS) as pool:
        yield pool


async def shown(redis: Redis, settings: GpuxSettings) -> dict[str, Shown]:
    """Both tiers' all-regions quotes as ``prices:best`` holds them."""
    found: dict[str, Shown] = {}
    for key in (ON_DEMAND, INTERRUPTIBLE):
        body = await redis.hget(settings.redis_key(BEST_ASKS), key)
        if body is None:
            continue
        quote = BestAskChanged.model_validate_json(body)
        best = quote.best
        found[key] = (
            None if best is None else best.offer_id,
            None if best is None else best.price,
            [level.gpus for level in quote.depth],
        )
    return found


def both(free: int) -> dict[str, Shown]:
    """What both quotes show when the offer has ``free`` GPUs."""
    if free == 0:
        return {ON_DEMAND: (None, None, []), INTERRUPTIBLE: (None, None, [])}
    return {
        ON_DEMAND: (OFFER.offer_id, Decimal("0.40"), [free]),
        INTERRUPTIBLE: (OFFER.offer_id, Decimal("0.25"), [free]),
    }


def showing(free: int) -> Callable[[dict[str, Shown]], bool]:
    """Whether what Redis shows is both quotes with ``free`` GPUs."""
    return lambda now: now == both(free)


async def test_a_two_price_offer_shows_in_both_tiers_and_its_depth_follows_its_free_gpus(
    module_settings: GpuxSettings, pool: asyncpg.Pool
) -> None:
    await ensure_topics(module_settings, REGISTRY)
    # What the catalog would have told pricing: the GPU model exists.
    await pool.execute("INSERT INTO pricing.gpus (id, name) VALUES ($1, 'RTX 4090')", GPU)
    async with running(SPEC, module_settings) as service:
        settings = service.settings
        await publish_payloads(settings, OFFERS_COMMANDS, "gateway", [(GPU, OFFER)])

        async def accepted() -> asyncpg.Record | None:
            return await pool.fetchrow(
                "SELECT status, interruptible_price, interruption_notice_seconds, tiers"
                " FROM pricing.offers WHERE offer_id = $1",
                OFFER.offer_id,
            )

        row = await eventually(accepted, what="the offer accepted")
        assert dict(row) == {
            "status": "accepted",
            "interruptible_price": Decimal("0.25"),
            "interruption_notice_seconds": 600,
            "tiers": ["on_demand", "interruptible"],
        }
        codec: EventCodec[OfferAccepted] = EventCodec(OfferAccepted)
        forwarded = await eventually(
            lambda: records_to_end(settings, PRICING_OFFERS), what="the offer sent to the book"
        )
        assert [codec.decode(r.value).payload for r in forwarded] == [
            OfferAccepted(offer=OFFER, revision=1)
        ]

        redis = Redis.from_url(settings.redis_url)
        try:
            # Live with 4 free; 3 leased (1 free); all leased (exhausted); 3 come back.
            for status, free in (
                (OfferStatus.LIVE, 4),
                (OfferStatus.LIVE, 1),
                (OfferStatus.EXHAUSTED, 0),
                (OfferStatus.LIVE, 3),
            ):
                report = offer_status(OFFER.offer_id, status, free)
                await publish_payloads(settings, OFFERS_STATUS, "matching", [(GPU, report)])
                await eventually(
                    lambda: shown(redis, settings),
                    showing(free),
                    what=f"both tiers showing {free} free GPUs",
                )
        finally:
            await redis.aclose()
