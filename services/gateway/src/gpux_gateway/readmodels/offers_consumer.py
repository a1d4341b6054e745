"""Applies offer status events (from pricing and the book) to the sellers' view of their offers."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_common.broker import subscriber_options
from gpux_common.clock import Clock
from gpux_common.contracts.offers import OfferStatusChanged
from gpux_common.events import EventCodec, decode_or_none
from gpux_common.outbox import consume_once
from gpux_common.settings import GpuxSettings
from gpux_common.topics import OFFERS_STATUS
from gpux_gateway.adapters import repository

log = logging.getLogger("gpux.gateway")


def offers_status_router(settings: GpuxSettings, pool: asyncpg.Pool, clock: Clock) -> KafkaRouter:
    """The subscriber that keeps gateway.offers in step with pricing and the book."""
    router = KafkaRouter()
    codec: EventCodec[Any] = EventCodec(OfferStatusChanged)

    @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        settings.topic(OFFERS_STATUS), **subscriber_options(settings, "gateway.offers-status")
    )
    async def on_status(message: KafkaMessage) -> None:
        envelope = decode_or_none(codec, message.body, log)
        if envelope is None:
            return
        change: OfferStatusChanged = envelope.payload

        async def apply(conn: asyncpg.Connection) -> None:
            await repository.apply_offer_status(conn, change, clock.now())

        await consume_once(pool, "gateway", OFFERS_STATUS.name, envelope.event_id, apply)

    return router
