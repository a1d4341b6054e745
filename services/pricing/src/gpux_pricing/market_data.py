"""From the offers on a book to the best-ask events and the Redis read model."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import asyncpg
from redis.asyncio import Redis

from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.prices import BestAsk, BestAskChanged, PriceLevel
from gpux_platform.redis_keys import BEST_ASKS, PRICES_STREAM, PRICES_STREAM_MAX
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters import repository
from gpux_pricing.domain.fx import REFERENCE, FxError, RateTable
from gpux_pricing.domain.market import LiveOffer, Market, Quote


def _in_every_currency(
    amount: Decimal, source: Currency, rates: RateTable, now: datetime
) -> dict[Currency, Decimal]:
    prices: dict[Currency, Decimal] = {}
    for target in Currency:
        try:
            prices[target] = canonical(rates.convert(amount, source, target, now))
        except FxError:
            continue  # no rate for that currency: it is left out rather than guessed
    return prices


def _payload(quote: Quote, rates: RateTable, now: datetime) -> BestAskChanged:
    best = None
    if quote.best is not None:
        best = BestAsk(
            offer_id=quote.best.offer_id,
            price=canonical(quote.best.price),
            currency=quote.best.currency,
            prices=_in_every_currency(quote.best.price, quote.best.currency, rates, now),
            gpus=quote.gpus_at_best,
        )
    depth = [
        PriceLevel(
            prices=_in_every_currency(from_micros(level.reference_micros), REFERENCE, rates, now),
            gpus=level.gpus,
        )
        for level in quote.depth
    ]
    return BestAskChanged(
        gpu=quote.gpu, tier=quote.tier, region=quote.region, best=best, depth=depth, as_of=now
    )


async def book_quotes(
    conn: asyncpg.Connection | asyncpg.Pool, gpu: str, tier: str, now: datetime
) -> list[BestAskChanged]:
    """The best ask and depth of one book (all regions, then each region)."""
    rates = await repository.rate_table(conn)
    market = Market()
    for offer, remaining in await repository.live_offers(conn, gpu, tier):
        try:
            reference = rates.reference_micros(offer.price_per_gpu_hour, offer.currency, now)
        except FxError:
            continue  # cannot be ranked without a rate; it was checked when accepted
        market.upsert(
            LiveOffer(
                offer.offer_id,
                offer.gpu,
                offer.tier.value,
                offer.region,
                offer.price_per_gpu_hour,
                offer.currency,
                remaining,
                reference,
            )
        )
    return [_payload(q, rates, now) for q in market.quotes(gpu, tier)]


def quote_key(quote: BestAskChanged) -> str:
    """The compacted-topic and Redis hash key of a quote."""
    return f"{quote.gpu}|{quote.tier}|{quote.region}"


async def to_redis(
    redis: Redis, settings: GpuxSettings, quotes: list[BestAskChanged], stream: bool = True
) -> None:
    """Keep the latest quotes readable and append them to the live stream."""
    if not quotes:
        return
    pipe = redis.pipeline(transaction=False)
    for quote in quotes:
        body = quote.model_dump_json()
        pipe.hset(settings.redis_key(BEST_ASKS), quote_key(quote), body)
        if stream:
            pipe.xadd(
                settings.redis_key(PRICES_STREAM),
                {"data": body},
                maxlen=PRICES_STREAM_MAX,
                approximate=True,
            )
    await pipe.execute()
