"""Applies order statuses (from billing and the book) and trades to the buyers' orders."""

from __future__ import annotations

from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter

from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.orders import OrderStatusChanged, TradeExecuted
from gpux_contracts.topics import MARKET_TRADES, ORDERS_STATUS
from gpux_gateway.adapters import repository
from gpux_platform.clock import Clock
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings


def orders_status_router(settings: GpuxSettings, pool: asyncpg.Pool, clock: Clock) -> KafkaRouter:
    """The subscribers that keep gateway.orders and gateway.order_fills in step with the book."""
    router = KafkaRouter()

    async def apply(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
        change: OrderStatusChanged = envelope.payload
        await repository.apply_order_status(conn, change, clock.now())

    async def keep_fill(conn: asyncpg.Connection, envelope: Envelope[Any]) -> None:
        trade: TradeExecuted = envelope.payload
        await repository.insert_fill(conn, trade)

    subscribe_once(
        router,
        settings,
        topic=ORDERS_STATUS,
        group="gateway.orders-status",
        codec=EventCodec(OrderStatusChanged),
        pool=pool,
        schema="gateway",
        handle=apply,
    )
    subscribe_once(
        router,
        settings,
        topic=MARKET_TRADES,
        group="gateway.order-fills",
        codec=EventCodec(TradeExecuted),
        pool=pool,
        schema="gateway",
        handle=keep_fill,
    )
    return router
