"""Applies offer status events (from pricing and the book) to the sellers' view of their offers."""

from __future__ import annotations

from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter

from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.offers import OfferStatusChanged
from gpux_contracts.topics import OFFERS_STATUS
from gpux_gateway.adapters import repository
from gpux_platform.clock import Clock
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings


def offers_status_router(settings: GpuxSettings, pool: asyncpg.Pool, clock: Clock) -> KafkaRouter:
    """The subscriber that keeps gateway.offers in step with pricing and the book."""
    router = KafkaRouter()

    async def apply(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
        change: OfferStatusChanged = envelope.payload
        await repository.apply_offer_status(conn, change, clock.now())

    subscribe_once(
        router,
        settings,
        topic=OFFERS_STATUS,
        group="gateway.offers-status",
        codec=EventCodec(OfferStatusChanged),
        pool=pool,
        schema="gateway",
        handle=apply,
    )
    return router
