"""Buyers' orders on the book: funded by billing, or cancelled.

A funded order is placed on the book once (a redelivery places nothing). While its GPU model
or the whole market is halted (``sessions``), it is rejected with ``market_halted`` instead
and never reaches the engine. A cancel takes an order's resting remainder off the book.
"""

from __future__ import annotations

from datetime import datetime

from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.market import HALTED_REASON
from gpux_contracts.money import to_micros
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
)
from gpux_contracts.reliability import min_reliability_bp
from gpux_contracts.topics import ORDERS_STATUS
from gpux_matching.domain import CancelOrder, PlaceOrder, epoch_micros
from gpux_matching.service.partition import execute
from gpux_matching.service.publishing import enveloper
from gpux_matching.service.unit_of_work import BookUnitOfWork
from gpux_platform.broker import Outgoing


async def on_funded(uow: BookUnitOfWork, event: Envelope[OrderFunded]) -> None:
    """Place a funded order on the book (or reject it while its market is halted)."""
    order = event.payload.order
    if await uow.orders.known(order.order_id):
        return
    await uow.orders.save(order.order_id, order.buyer_id, order.gpu)
    now = uow.partition.clock.now()
    if await uow.market.halted(order.gpu):
        uow.outbox.add(halted_rejection(event, order, now))
        return
    command = place_command(order, epoch_micros(now))
    execute(uow, command, event)


async def on_cancel_requested(uow: BookUnitOfWork, event: Envelope[OrderCancelRequested]) -> None:
    """Cancel an order's resting remainder (nothing to do when it no longer rests)."""
    order_id = event.payload.order_id
    if uow.partition.engine.order(order_id) is not None:
        execute(uow, CancelOrder(now=uow.partition.now_micros(), order_id=order_id), event)


def place_command(order: OrderPlaced, now: int) -> PlaceOrder:
    """The engine command that places a funded order (``now`` in epoch microseconds)."""
    price = order.max_price_per_gpu_hour
    return PlaceOrder(
        now=now,
        order_id=order.order_id,
        buyer_id=order.buyer_id,
        gpu=order.gpu,
        gpus=order.gpus,
        currency=str(order.currency),
        order_type=str(order.type),
        price_micros=None if price is None else to_micros(price),
        tier=str(order.tier),
        region=order.region,
        hours=order.hours,
        time_in_force=str(order.time_in_force),
        expires_at=None if order.expires_at is None else epoch_micros(order.expires_at),
        min_reliability_bp=min_reliability_bp(order.min_reliability),
    )


def halted_rejection(event: Envelope[OrderFunded], order: OrderPlaced, now: datetime) -> Outgoing:
    """The ``rejected`` status of a funded order that arrived while its market was halted."""
    changed = OrderStatusChanged(
        order_id=order.order_id,
        buyer_id=order.buyer_id,
        gpu=order.gpu,
        status=OrderStatus.REJECTED,
        filled_gpus=0,
        remaining_gpus=order.gpus,
        reason=HALTED_REASON,
    )
    event_id = stable_id(event.event_id, "order", order.order_id, HALTED_REASON)
    envelope = enveloper(event, event.event_id, now)(changed, event_id)
    return Outgoing(ORDERS_STATUS, order.gpu, envelope)
