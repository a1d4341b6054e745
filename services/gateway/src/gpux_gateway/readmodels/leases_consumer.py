"""Applies billing's lease events to the buyers' and sellers' view of their leases."""

from __future__ import annotations

from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter

from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.leases import LeaseCharged, LeaseEnded, LeaseLowBalance, LeaseOpened
from gpux_contracts.topics import BILLING_LEASES
from gpux_gateway.adapters import leases
from gpux_platform.clock import Clock
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings


def leases_router(settings: GpuxSettings, pool: asyncpg.Pool, clock: Clock) -> KafkaRouter:
    """The subscriber that keeps gateway.leases in step with billing."""
    router = KafkaRouter()

    async def apply(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
        event = envelope.payload
        now = clock.now()
        if isinstance(event, LeaseOpened):
            await leases.apply_opened(conn, event, now)
        elif isinstance(event, LeaseCharged):
            await leases.apply_charged(conn, event, now)
        elif isinstance(event, LeaseLowBalance):
            await leases.apply_low_balance(conn, event, now)
        elif isinstance(event, LeaseEnded):
            await leases.apply_ended(conn, event, now)

    subscribe_once(
        router,
        settings,
        topic=BILLING_LEASES,
        group="gateway.leases",
        codec=EventCodec(LeaseOpened, LeaseCharged, LeaseLowBalance, LeaseEnded),
        pool=pool,
        schema="gateway",
        handle=apply,
    )
    return router
