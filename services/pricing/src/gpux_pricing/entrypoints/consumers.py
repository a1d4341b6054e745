"""Pricing's subscribers: thin adapters from Kafka records to handlers, once per event."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter
from redis.asyncio import Redis

from gpux_contracts.accounts import AccountChanged
from gpux_contracts.catalog import GpuPublished, ModelPublished
from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.fx import RatePublished
from gpux_contracts.offers import (
    OfferChangeRequested,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
)
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import (
    ACCOUNTS,
    CATALOG_GPUS,
    FX_RATES,
    MARKET_TRADES,
    OFFERS_COMMANDS,
    OFFERS_STATUS,
    Topic,
)
from gpux_platform.clock import Clock
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings
from gpux_pricing import handlers, history, market_data
from gpux_pricing.domain.validation import Band

Handler = Callable[[asyncpg.Connection, Envelope[Any]], Awaitable[None]]


def pricing_router(
    settings: GpuxSettings,
    pool: asyncpg.Pool,
    redis: Redis,
    clock: Clock,
    band_for: Callable[[str], Band],
) -> KafkaRouter:
    """Every subscriber of the pricing service."""
    router = KafkaRouter()

    def subscribe(topic: Topic, codec: EventCodec[Any], route: Mapping[str, Handler]) -> None:
        async def dispatch(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
            handler = route.get(envelope.event_type)
            if handler is not None:
                await handler(conn, envelope)

        subscribe_once(
            router,
            settings,
            topic=topic,
            group=f"pricing.{topic.name}",
            codec=codec,
            pool=pool,
            schema=handlers.SCHEMA,
            handle=dispatch,
        )

    subscribe(
        ACCOUNTS, EventCodec(AccountChanged), {"account.changed": handlers.on_account_changed}
    )
    subscribe(
        CATALOG_GPUS,
        EventCodec(GpuPublished, ModelPublished),
        {"gpu.published": handlers.on_gpu_published},
    )
    subscribe(
        FX_RATES, EventCodec(RatePublished), {"fx.rate_published": handlers.on_rate_published}
    )
    subscribe(
        OFFERS_COMMANDS,
        EventCodec(OfferSubmitted, OfferChangeRequested, OfferWithdrawalRequested),
        {
            "offer.submitted": lambda c, e: handlers.on_offer_submitted(
                c, e, band_for(e.payload.gpu), clock.now()
            ),
            "offer.change_requested": lambda c, e: handlers.on_offer_change_requested(
                c, e, band_for(e.payload.gpu), clock.now()
            ),
            "offer.withdrawal_requested": lambda c, e: handlers.on_offer_withdrawal_requested(
                c, e, clock.now()
            ),
        },
    )

    async def book_status(
        conn: asyncpg.Connection, envelope: Envelope[Any]
    ) -> list[BestAskChanged]:
        return await handlers.on_book_status(conn, envelope, clock.now())

    async def publish_read_model(quotes: list[BestAskChanged]) -> None:
        await market_data.to_redis(redis, settings, quotes)

    subscribe_once(
        router,
        settings,
        topic=OFFERS_STATUS,
        group="pricing.offers.status",
        codec=EventCodec(OfferStatusChanged),
        pool=pool,
        schema=handlers.SCHEMA,
        handle=book_status,
        after=publish_read_model,
    )

    async def publish_history(snapshot: history.Snapshot | None) -> None:
        await history.to_redis(redis, settings, snapshot)

    subscribe_once(
        router,
        settings,
        topic=MARKET_TRADES,
        group="pricing.market.trades",
        codec=EventCodec(TradeExecuted),
        pool=pool,
        schema=handlers.SCHEMA,
        handle=history.on_trade_executed,
        after=publish_history,
    )
    return router
