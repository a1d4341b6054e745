"""Keeps the lines of billing's posted transfers for accounts' statements."""

from __future__ import annotations

from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter

from gpux_common.consumers import subscribe_once
from gpux_common.contracts.leases import LedgerPosted
from gpux_common.events import Envelope, EventCodec
from gpux_common.settings import GpuxSettings
from gpux_common.topics import BILLING_LEDGER
from gpux_gateway.adapters import leases


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
