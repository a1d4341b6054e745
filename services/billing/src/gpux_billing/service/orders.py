"""Orders: hold the first period before the book sees an order, release what it left.

``order.placed`` (orders.commands) holds one hour of the order's GPUs at its limit, or at a
market order's cap, in its wallet's currency (``hold:<order>``), and answers
``order.funded`` to the book (orders.book) or ``order.status_changed`` ``rejected`` with the
reason. A cancel is forwarded to the book behind the order (same key, same partition). A
final status from the book (orders.status) releases the unfilled share of the hold, once
(``release:<order>``).

Set-based per batch: ``prepare`` reads once what the batch's orders are decided from (their
holds, their wallets' available balances, locked, the rates and best asks they need) into
the unit's ``staged.funding``; each handler decides its event in turn there
(``domain.funding``) and answers it at once, so the book's messages keep the events' order;
the unit's commit then calls ``write`` (through ``service.flush``): every transfer in one
post, the holds in one insert, the releases in one update; ``service.flush`` then reads the
balances once and announces one ``balance.changed`` per wallet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpux_billing.domain import holds
from gpux_billing.domain.funding import Refused, ask_of, converts, wallet_of
from gpux_billing.service.events import PRODUCER, outgoing
from gpux_billing.service.ledger import post_each
from gpux_billing.service.unit_of_work import BillingUnitOfWork, Staged
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
)
from gpux_contracts.topics import ORDERS_BOOK, ORDERS_STATUS


def _releases(event: Envelope[Any]) -> bool:
    """Whether an event is a final status from the book (one that releases a hold)."""
    change = event.payload
    return (
        isinstance(change, OrderStatusChanged)
        and event.producer != PRODUCER
        and change.status in holds.RELEASING
    )


async def prepare(uow: BillingUnitOfWork, events: Sequence[Envelope[Any]]) -> None:
    """Read what the events' orders are decided from, for those not read yet in this unit:
    their holds (locked), their wallets' available balances (locked), the rates and the best
    asks; one query each, whatever the batch's size."""
    funding = uow.staged.funding
    placed = [e.payload for e in events if isinstance(e.payload, OrderPlaced)]
    ended = [e.payload.order_id for e in events if _releases(e)]
    await read_holds(uow, {o.order_id for o in placed}.union(ended))
    wallets = {wallet_of(o) for o in placed} - funding.available.keys()
    if wallets:
        funding.available.update(await uow.ledger.lock_available(wallets))
    if funding.rates is None and any(converts(o) for o in placed):
        funding.rates = await uow.rates.all()
    asks = {a for o in placed if (a := ask_of(o)) is not None} - funding.asks.keys()
    if asks:
        funding.asks.update(await uow.best_asks.best_many(asks))


async def read_holds(uow: BillingUnitOfWork, order_ids: set[str]) -> None:
    """Read the holds of these orders, locked, for those not read yet in this unit (one query)."""
    funding = uow.staged.funding
    unread = order_ids - funding.looked_up
    if unread:
        funding.learn_holds(unread, await uow.holds.get_many(sorted(unread)))


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


async def on_placed(uow: BillingUnitOfWork, event: Envelope[OrderPlaced]) -> None:
    """Hold the first period of an order; answer ``order.funded`` or a rejection."""
    order = event.payload
    await prepare(uow, [event])  # read already, by the batch's prepare hook
    decision = uow.staged.funding.place(order, event.occurred_at, uow.now, uow.rules.hold)
    if decision is None:
        return  # the same order again (another command id): already funded
    if isinstance(decision, Refused):
        _reject(uow, event, decision.reason, decision.shortfall)
        return
    hold = decision.hold
    staged = uow.staged
    staged.transfers.append((decision.transfer, event))
    staged.holds.append((hold, event.occurred_at))
    staged.wallets[(hold.buyer_id, hold.currency)] = event
    # The book applies the cap billing chose for a market order without one.
    funded = OrderFunded(
        order=order.model_copy(update={"max_price_per_gpu_hour": decision.price}),
        hold_id=decision.transfer.id,
        held=canonical(from_micros(hold.held_micros)),
        held_currency=hold.currency,
    )
    event_id = stable_id(event.event_id, "funded")
    uow.outbox.add(
        outgoing(ORDERS_BOOK, order.gpu, funded, cause=event, event_id=event_id, now=uow.now)
    )


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
    if not _releases(event):
        return
    await prepare(uow, [event])  # read already, by the batch's prepare hook
    released = uow.staged.funding.release(event.payload, event.occurred_at)
    if released is None:
        return
    hold = released.hold
    staged = uow.staged
    staged.transfers.append((released.transfer, event))
    staged.releases.append((hold.order_id, released.amount_micros, event.occurred_at))
    staged.wallets[(hold.buyer_id, hold.currency)] = event


async def write(uow: BillingUnitOfWork, staged: Staged) -> None:
    """Write the order funding the unit's handlers decided, set-based: every transfer in one
    post (with a ``ledger.posted`` each), the holds in one insert, the releases in one update.
    ``service.flush`` calls it when the unit commits, before the outbox, and announces the
    wallets it staged."""
    if staged.transfers:
        await post_each(uow, staged.transfers)
    if staged.holds:
        await uow.holds.add_many(staged.holds)
    if staged.releases:
        await uow.holds.record_releases(staged.releases)
