"""Orders: hold the first period before the book sees an order, release what it left.

``order.placed`` (orders.commands) holds one hour of the order's GPUs at its limit, or at a
market order's cap, in its wallet's currency (``hold:<order>``), and answers
``order.funded`` to the book (orders.book) or ``order.status_changed`` ``rejected`` with the
reason. A cancel is forwarded to the book behind the order (same key, same partition). A
final status from the book (orders.status) releases the unfilled share of the hold, once
(``release:<order>``).
"""

from __future__ import annotations

from decimal import Decimal

from gpux_billing.domain import holds, transfers
from gpux_billing.domain.amounts import convert
from gpux_billing.domain.fx import NoRate, cross
from gpux_billing.domain.holds import Hold
from gpux_billing.domain.ledger import InsufficientFunds, LedgerError, Transfer
from gpux_billing.service.events import PRODUCER, outgoing
from gpux_billing.service.ledger import announce, post
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
    OrderType,
)
from gpux_contracts.topics import ORDERS_BOOK, ORDERS_STATUS


def _reject(
    uow: BillingUnitOfWork,
    event: Envelope[OrderPlaced],
    reason: str,
    shortfall: tuple[int, Currency] | None = None,
) -> None:
    """Answer the order ``rejected`` (with the shortfall, in the wallet's currency)."""
    order = event.payload
    payload = OrderStatusChanged(
        order_id=order.order_id,
        buyer_id=order.buyer_id,
        gpu=order.gpu,
        status=OrderStatus.REJECTED,
        filled_gpus=0,
        remaining_gpus=0,
        reason=reason,
        shortfall=None if shortfall is None else canonical(from_micros(shortfall[0])),
        shortfall_currency=None if shortfall is None else shortfall[1],
    )
    event_id = stable_id(event.event_id, "rejected")
    uow.outbox.add(
        outgoing(ORDERS_STATUS, order.gpu, payload, cause=event, event_id=event_id, now=uow.now)
    )


async def _hold_price(uow: BillingUnitOfWork, order: OrderPlaced) -> Decimal | str:
    """The price per GPU-hour an order holds at, in its currency, or why it cannot be held."""
    if order.max_price_per_gpu_hour is not None:
        return order.max_price_per_gpu_hour
    if order.type is not OrderType.MARKET:
        return "price_required"
    best = await uow.best_asks.best(order.gpu, order.tier, order.region, order.currency)
    if best is None:
        return "no_offers"  # nothing to take, so nothing to measure the slippage from
    return holds.market_cap(best, uow.rules.hold.slippage_bps)


async def _in_wallet(uow: BillingUnitOfWork, order: OrderPlaced, amount: int) -> int | str:
    """An amount of the order's currency in its wallet's, at the current rate (or why not)."""
    wallet = order.wallet_currency or order.currency
    if wallet is order.currency:
        return amount
    try:
        rate, rate_at = cross(await uow.rates.all(), order.currency, wallet)
    except NoRate:
        return "fx_rate_missing"
    if holds.stale(rate_at, uow.now, uow.rules.hold):
        return "fx_rate_stale"
    return convert(amount, rate)


async def _place_hold(
    uow: BillingUnitOfWork, event: Envelope[OrderPlaced], wallet: Currency, amount: int
) -> bool:
    """Post the hold (a refusal leaves the unit usable and answers the order); True if held."""
    order = event.payload
    try:
        transfer: Transfer = transfers.hold(
            f"hold:{order.order_id}",
            order.buyer_id,
            wallet,
            amount,
            event.occurred_at,
            reference=f"order {order.order_id}"[:200],
        )
        await post(uow, [transfer], event, isolated=True)
    except InsufficientFunds as exc:
        _reject(uow, event, "insufficient_funds", (exc.shortfall_micros, wallet))
        return False
    except LedgerError as exc:
        _reject(uow, event, exc.reason.value)
        return False
    return True


async def on_placed(uow: BillingUnitOfWork, event: Envelope[OrderPlaced]) -> None:
    """Hold the first period of an order; answer ``order.funded`` or a rejection."""
    order = event.payload
    if await uow.holds.get(order.order_id) is not None:
        return  # the same order again (another command id): already funded
    price = await _hold_price(uow, order)
    if isinstance(price, str):
        _reject(uow, event, price)
        return
    amount = await _in_wallet(uow, order, holds.first_period_micros(price, order.gpus))
    if isinstance(amount, str):
        _reject(uow, event, amount)
        return
    wallet = order.wallet_currency or order.currency
    if not await _place_hold(uow, event, wallet, amount):
        return
    hold = Hold(order.order_id, order.buyer_id, order.gpu, order.gpus, wallet, amount)
    await uow.holds.add(hold, event.occurred_at)
    # The book applies the cap billing chose for a market order without one.
    funded = OrderFunded(
        order=order.model_copy(update={"max_price_per_gpu_hour": price}),
        hold_id=f"hold:{order.order_id}",
        held=canonical(from_micros(amount)),
        held_currency=wallet,
    )
    event_id = stable_id(event.event_id, "funded")
    message = outgoing(ORDERS_BOOK, order.gpu, funded, cause=event, event_id=event_id, now=uow.now)
    await announce(uow, event, [(order.buyer_id, wallet)], [message])


async def on_cancel_requested(
    uow: BillingUnitOfWork, event: Envelope[OrderCancelRequested]
) -> None:
    """Forward a cancel to the book unchanged, behind the order's funding (same partition)."""
    request = event.payload
    event_id = stable_id(event.event_id, "book")
    uow.outbox.add(
        outgoing(ORDERS_BOOK, request.gpu, request, cause=event, event_id=event_id, now=uow.now)
    )


async def on_status_changed(uow: BillingUnitOfWork, event: Envelope[OrderStatusChanged]) -> None:
    """Release the unfilled part of an order's hold when the book ends the order."""
    change = event.payload
    if event.producer == PRODUCER or change.status not in holds.RELEASING:
        return
    hold = await uow.holds.get(change.order_id)
    if hold is None or hold.released_micros > 0:
        return  # never funded (billing rejected it), or released already
    amount = holds.unfilled_micros(hold, change.filled_gpus)
    if amount == 0:
        return
    transfer = transfers.release(
        f"release:{hold.order_id}",
        hold.buyer_id,
        hold.currency,
        amount,
        event.occurred_at,
        reference=f"order {hold.order_id} {change.status.value}"[:200],
    )
    await post(uow, [transfer], event)
    await uow.holds.record_release(hold.order_id, amount, event.occurred_at)
    await announce(uow, event, [(hold.buyer_id, hold.currency)])
