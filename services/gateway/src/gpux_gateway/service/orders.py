"""Buyers' orders as billing and the book report them (``orders.status``), their fills
(``market.trades``) and the cap billing funded a market order at (``orders.book``)."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.money import to_micros
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderStatusChanged,
    OrderType,
    TradeExecuted,
)
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.account_events import tell
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_status_changed(uow: GatewayUnitOfWork, event: Envelope[OrderStatusChanged]) -> None:
    """Show the order's status and fills, unless the report is older than what is shown; the
    buyer hears of it (``order.updated``)."""
    await uow.orders.apply_status(event.payload, uow.now)
    await tell(uow, event, AccountEventType.ORDER_UPDATED, event.payload.buyer_id)


async def on_trade_executed(uow: GatewayUnitOfWork, event: Envelope[TradeExecuted]) -> None:
    """Keep the trade as a fill of the buyer's order; the buyer hears of it (``order.filled``)."""
    await uow.orders.add_fill(event.payload)
    await tell(uow, event, AccountEventType.ORDER_FILLED, event.payload.buyer_id)


async def on_funded(uow: GatewayUnitOfWork, event: Envelope[OrderFunded]) -> None:
    """Show the cap a market order without one was held and limited at: billing funds it at
    the best ask plus its slippage, and the book takes nothing dearer."""
    order = event.payload.order
    # Only a market order can be funded without a cap of its own (a limit order has its price).
    if order.type is OrderType.MARKET and order.max_price_per_gpu_hour is not None:
        cap = to_micros(order.max_price_per_gpu_hour)
        await uow.orders.apply_cap(order.buyer_id, order.order_id, cap)


async def on_cancel_forwarded(
    uow: GatewayUnitOfWork, event: Envelope[OrderCancelRequested]
) -> None:
    """Nothing to show: the gateway showed the cancel when the buyer asked for it, and the
    book's answer comes as the order's status (``orders.status``)."""
