"""Keeps the lines of billing's posted transfers for accounts' statements."""

from __future__ import annotations

from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter

from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.leases import LedgerPosted
from gpux_contracts.topics import BILLING_LEDGER
from gpux_gateway.adapters import leases
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings


def ledger_router(settings: GpuxSettings, pool: asyncpg.Pool) -> KafkaRouter:
    """The subscriber that fills gateway.ledger_lines from billing.ledger."""
    router = KafkaRouter()

    async def keep(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
        posted: LedgerPosted = envelope.payload
        await leases.insert_ledger_lines(conn, posted)

    subscribe_once(
        router,
        settings,
        topic=BILLING_LEDGER,
        group="gateway.ledger",
        codec=EventCodec(LedgerPosted),
        pool=pool,
        schema="gateway",
        handle=keep,
    )
    return router
