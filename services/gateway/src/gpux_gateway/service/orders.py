"""Buyers' orders as billing and the book report them (``orders.status``), and their fills
(``market.trades``)."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.orders import OrderStatusChanged, TradeExecuted
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_status_changed(uow: GatewayUnitOfWork, event: Envelope[OrderStatusChanged]) -> None:
    """Show the order's status and fills, unless the report is older than what is shown."""
    await uow.orders.apply_status(event.payload, uow.now)


async def on_trade_executed(uow: GatewayUnitOfWork, event: Envelope[TradeExecuted]) -> None:
    """Keep the trade as a fill of the buyer's order."""
    await uow.orders.add_fill(event.payload)
