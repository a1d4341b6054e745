"""Pricing's subscribers: thin adapters from Kafka records to handlers, once per event."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage
from redis.asyncio import Redis

from gpux_common.broker import subscriber_options
from gpux_common.clock import Clock
from gpux_common.contracts.accounts import AccountChanged
from gpux_common.contracts.catalog import GpuPublished, ModelPublished
from gpux_common.contracts.fx import RatePublished
from gpux_common.contracts.offers import (
    OfferChangeRequested,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
)
from gpux_common.contracts.prices import BestAskChanged
from gpux_common.events import Envelope, EventCodec, decode_or_none
from gpux_common.outbox import consume_once
from gpux_common.settings import GpuxSettings
from gpux_common.topics import (
    ACCOUNTS,
    CATALOG_GPUS,
    FX_RATES,
    OFFERS_COMMANDS,
    OFFERS_STATUS,
    Topic,
)
from gpux_pricing import handlers, market_data
from gpux_pricing.domain.validation import Band

log = logging.getLogger("gpux.pricing")
Handler = Callable[[asyncpg.Connection, Envelope[Any]], Awaitable[None]]


def pricing_router(
    settings: GpuxSettings, pool: asyncpg.Pool, redis: Redis, clock: Clock, band: Band
) -> KafkaRouter:
    """Every subscriber of the pricing service."""
    router = KafkaRouter()

    def subscribe(topic: Topic, codec: EventCodec[Any], route: dict[str, Handler]) -> None:
        @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
            settings.topic(topic), **subscriber_options(settings, f"pricing.{topic.name}")
        )
        async def consume(message: KafkaMessage) -> None:
            envelope = decode_or_none(codec, message.body, log)
            if envelope is None:
                return
            handler = route.get(envelope.event_type)
            if handler is None:
                return

            async def apply(conn: asyncpg.Connection) -> None:
                await handler(conn, envelope)

            await consume_once(pool, handlers.SCHEMA, topic.name, envelope.event_id, apply)

    subscribe(
        ACCOUNTS,
        EventCodec(AccountChanged),
        {"account.changed": handlers.on_account_changed},
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
            "offer.submitted": lambda c, e: handlers.on_offer_submitted(c, e, band, clock.now()),
            "offer.change_requested": lambda c, e: handlers.on_offer_change_requested(
                c, e, band, clock.now()
            ),
            "offer.withdrawal_requested": lambda c, e: handlers.on_offer_withdrawal_requested(
                c, e, clock.now()
            ),
        },
    )
    status_codec: EventCodec[Any] = EventCodec(OfferStatusChanged)

    @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        settings.topic(OFFERS_STATUS), **subscriber_options(settings, "pricing.offers.status")
    )
    async def on_book_status(message: KafkaMessage) -> None:
        envelope = decode_or_none(status_codec, message.body, log)
        if envelope is None:
            return
        quotes: list[BestAskChanged] = []

        async def apply(conn: asyncpg.Connection) -> None:
            quotes.extend(await handlers.on_book_status(conn, envelope, clock.now()))

        if await consume_once(pool, handlers.SCHEMA, OFFERS_STATUS.name, envelope.event_id, apply):
            # After the commit: the read model follows the database, never leads it.
            await market_data.to_redis(redis, settings, quotes)

    return router
