"""Matching's subscribers: thin adapters from Kafka records to the book, once per event."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_common.broker import subscriber_options
from gpux_common.consumers import subscribe_once
from gpux_common.contracts.fx import RatePublished
from gpux_common.contracts.market import MarketStateChanged
from gpux_common.contracts.offers import OfferAccepted, OfferWithdrawn
from gpux_common.contracts.orders import OrderCancelRequested, OrderFunded
from gpux_common.events import Envelope, EventCodec, decode_or_none
from gpux_common.settings import GpuxSettings
from gpux_common.topics import FX_RATES, MARKET_SESSIONS, ORDERS_BOOK, PRICING_OFFERS, Topic
from gpux_matching import handlers
from gpux_matching.domain import Command

log = logging.getLogger("gpux.matching")
Planner = Callable[[asyncpg.Connection, handlers.Book, Envelope[Any]], Awaitable[Command | None]]


def matching_router(settings: GpuxSettings, book: handlers.Book) -> KafkaRouter:
    """Every subscriber of the matching service."""
    router = KafkaRouter()

    def subscribe(topic: Topic, codec: EventCodec[Any], route: dict[str, Planner]) -> None:
        @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
            settings.topic(topic), **subscriber_options(settings, f"matching.{topic.name}")
        )
        async def consume(message: KafkaMessage) -> None:
            envelope = decode_or_none(codec, message.body, log)
            if envelope is None:
                return
            planner = route.get(envelope.event_type)
            if planner is None:
                return

            async def plan(conn: asyncpg.Connection) -> Command | None:
                return await planner(conn, book, envelope)

            await book.consume(topic.name, envelope, plan)

    subscribe(
        PRICING_OFFERS,
        EventCodec(OfferAccepted, OfferWithdrawn),
        {"offer.accepted": handlers.plan_accepted, "offer.withdrawn": handlers.plan_withdrawn},
    )
    subscribe(FX_RATES, EventCodec(RatePublished), {"fx.rate_published": handlers.plan_rate})
    subscribe(
        ORDERS_BOOK,
        EventCodec(OrderFunded, OrderCancelRequested),
        {"order.funded": handlers.plan_funded, "order.cancel_requested": handlers.plan_cancel},
    )
    # Not a book command: the state goes to matching.market_state, read by plan_funded.
    subscribe_once(
        router,
        settings,
        topic=MARKET_SESSIONS,
        group="matching.market.sessions",
        codec=EventCodec(MarketStateChanged),
        pool=book.pool,
        schema=handlers.SCHEMA,
        handle=handlers.record_market_state,
    )
    return router
