"""Billing's handlers: each runs in one transaction with its inbox claim and outbox writes.

Every handler returns the wallets ``(account, currency)`` whose balances it changed; the
consumer refreshes their Redis read model after the commit (``balances.to_redis``).
Ledger transfers take the causing event's ``occurred_at`` as their time, so handling the
same command again (a crash before commit) builds the identical transfer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_billing.adapters import leases as lease_repository
from gpux_billing.adapters import ledger_repository as ledger
from gpux_billing.adapters import market_data, wallets
from gpux_billing.domain import holds, transfers
from gpux_billing.domain.amounts import convert
from gpux_billing.domain.fx import NoRate, cross
from gpux_billing.domain.holds import HoldPolicy
from gpux_billing.domain.ledger import (
    InsufficientFunds,
    LedgerError,
    Transfer,
)
from gpux_contracts.billing import (
    BalanceChanged,
    CreditRequested,
    TopupConfirmRequested,
    TopupRequested,
)
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LedgerLine, LedgerPosted
from gpux_contracts.money import Currency, canonical, from_micros, quantize, to_micros
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
    OrderType,
)
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import (
    BILLING_BALANCES,
    BILLING_LEDGER,
    ORDERS_BOOK,
    ORDERS_STATUS,
    Topic,
)
from gpux_platform import outbox
from gpux_platform.broker import Outgoing

SCHEMA = "billing"
PRODUCER = "billing"
DEV = "dev"
MANUAL = "manual"
PROVIDERS = {DEV, MANUAL}
RELEASING = {OrderStatus.CANCELLED, OrderStatus.EXPIRED, OrderStatus.REJECTED}

Wallet = tuple[str, Currency]
"""An (account, currency) whose balances changed."""


def outgoing(
    topic: Topic,
    key: str,
    payload: Payload,
    cause: Envelope[Any] | None,
    event_id: str,
    now: datetime,
) -> Outgoing:
    """An event for the outbox, in the trace of its cause (None: billing's own timer)."""
    envelope = wrap(
        payload,
        producer=PRODUCER,
        occurred_at=now,
        event_id=event_id,
        correlation_id=None if cause is None else cause.correlation_id,
        causation_id=None if cause is None else cause.event_id,
        trace=None if cause is None else cause.trace,
    )
    return Outgoing(topic, key, envelope)


def ledger_posted(transfer: Transfer, cause: Envelope[Any] | None, now: datetime) -> Outgoing:
    """The ``ledger.posted`` event of a transfer: its entries on accounts' own balances."""
    fx = transfer.fx
    payload = LedgerPosted(
        transfer_id=transfer.id,
        kind=transfer.kind.value,
        created_at=transfer.created_at,
        reference=transfer.reference,
        fx_rate=None if fx is None else fx.rate,
        fx_base=None if fx is None else fx.base,
        fx_quote=None if fx is None else fx.quote,
        fx_rate_at=None if fx is None else fx.rate_at,
        lines=[
            LedgerLine(
                owner=e.account.owner,
                currency=e.account.currency,
                kind=e.account.kind.value,
                amount=canonical(from_micros(e.amount_micros)),
            )
            for e in transfer.entries
            if not e.account.kind.platform_owned
        ],
    )
    event_id = stable_id("ledger", transfer.id)
    return outgoing(BILLING_LEDGER, transfer.id, payload, cause, event_id, now)


async def post(
    conn: asyncpg.Connection,
    transfers: Sequence[Transfer],
    cause: Envelope[Any] | None,
    now: datetime,
) -> None:
    """Post transfers (one statement) and put a ``ledger.posted`` for each new one in the outbox."""
    posted = await ledger.post_many(conn, transfers)
    fresh = [p.transfer for p in posted if not p.replayed]
    if fresh:
        await outbox.add(conn, SCHEMA, [ledger_posted(t, cause, now) for t in fresh])


async def balances_changed(
    conn: asyncpg.Connection, wallets_: Sequence[Wallet], now: datetime
) -> list[BalanceChanged]:
    """The wallets' available and held balances as this transaction sees them (one query)."""
    found = await ledger.wallet_balances(conn, wallets_)
    return [
        BalanceChanged(
            account_id=account_id,
            currency=currency,
            available=canonical(from_micros(available)),
            held=canonical(from_micros(held)),
            as_of=now,
        )
        for (account_id, currency), (available, held) in found.items()
    ]


def balance_key(account_id: str, currency: Currency) -> str:
    """The compacted ``billing.balances`` key of a wallet."""
    return f"{account_id}|{currency.value}"


async def announce(
    conn: asyncpg.Connection,
    cause: Envelope[Any] | None,
    wallets_: Sequence[Wallet],
    now: datetime,
    extra: Sequence[Outgoing] = (),
) -> list[Wallet]:
    """Write BalanceChanged for each touched wallet (plus ``extra``) to the outbox."""
    # Read after posting: the ledger's trigger locks the touched accounts until commit, so a
    # later transaction's balance event is also later in the outbox.
    unique = sorted(set(wallets_))
    messages = list(extra)
    origin = "tick" if cause is None else cause.event_id
    for payload in await balances_changed(conn, unique, now):
        account_id, currency = payload.account_id, payload.currency
        event_id = stable_id(origin, "balance", account_id, currency.value, now.isoformat())
        messages.append(
            outgoing(
                BILLING_BALANCES, balance_key(account_id, currency), payload, cause, event_id, now
            )
        )
    await outbox.add(conn, SCHEMA, messages)
    return unique


async def _book_topup(
    conn: asyncpg.Connection, topup: wallets.Topup, at: datetime, cause: Envelope[Any]
) -> list[Wallet]:
    if topup.account_id is None or topup.currency is None or topup.amount_micros is None:
        return []  # only a confirmation so far: its request books it when it comes
    transfer = transfers.topup(
        f"topup:{topup.id}",
        topup.account_id,
        topup.currency,
        topup.amount_micros,
        at,
        reference=f"top-up {topup.id} ({topup.provider})",
    )
    await post(conn, [transfer], cause, at)
    await wallets.set_topup_status(conn, topup.id, "booked", None, at)
    return await announce(conn, cause, [(topup.account_id, topup.currency)], at)


async def on_topup_requested(
    conn: asyncpg.Connection, event: Envelope[TopupRequested], dev_topups: bool
) -> list[Wallet]:
    """Record a top-up; the dev provider (when enabled) or an earlier confirmation books it."""
    request = event.payload
    at = event.occurred_at
    amount = to_micros(quantize(request.amount))
    topup = await wallets.record_request(
        conn,
        request.topup_id,
        request.account_id,
        request.currency,
        amount,
        request.provider,
        at,
    )
    if topup.status != "requested" or topup.account_id != request.account_id:
        return []  # already booked or refused, or the id belongs to another account
    if request.provider not in PROVIDERS or (request.provider == DEV and not dev_topups):
        await wallets.set_topup_status(conn, topup.id, "rejected", "provider_disabled", at)
        return []
    if request.provider == DEV or topup.confirmed:
        return await _book_topup(conn, topup, at, event)
    return []  # manual: waits for the admin's confirmation


async def on_topup_confirm_requested(
    conn: asyncpg.Connection, event: Envelope[TopupConfirmRequested]
) -> list[Wallet]:
    """Book a manual top-up the admin confirmed (or remember the confirmation until it comes)."""
    at = event.occurred_at
    topup = await wallets.record_confirmation(conn, event.payload.topup_id, at)
    if topup.status != "requested" or topup.account_id is None:
        return []
    if topup.provider not in PROVIDERS:
        return []
    return await _book_topup(conn, topup, at, event)


async def on_credit_requested(
    conn: asyncpg.Connection, event: Envelope[CreditRequested]
) -> list[Wallet]:
    """Book an admin credit: like a top-up, from top-up clearing to the wallet."""
    credit = event.payload
    at = event.occurred_at
    transfer = transfers.topup(
        f"credit:{credit.credit_id}",
        credit.account_id,
        credit.currency,
        to_micros(quantize(credit.amount)),
        at,
        reference=f"credit by {credit.requested_by}: {credit.reference}"[:200],
    )
    await post(conn, [transfer], event, at)
    return await announce(conn, event, [(credit.account_id, credit.currency)], at)


def _rejected(
    order: OrderPlaced,
    reason: str,
    cause: Envelope[Any],
    now: datetime,
    shortfall_micros: int | None = None,
    shortfall_currency: Currency | None = None,
) -> Outgoing:
    payload = OrderStatusChanged(
        order_id=order.order_id,
        buyer_id=order.buyer_id,
        gpu=order.gpu,
        status=OrderStatus.REJECTED,
        filled_gpus=0,
        remaining_gpus=0,
        reason=reason,
        shortfall=None if shortfall_micros is None else canonical(from_micros(shortfall_micros)),
        shortfall_currency=None
        if shortfall_micros is None
        else shortfall_currency or order.wallet_currency or order.currency,
    )
    event_id = stable_id(cause.event_id, "rejected")
    return outgoing(ORDERS_STATUS, order.gpu, payload, cause, event_id, now)


async def _hold_price(
    conn: asyncpg.Connection, order: OrderPlaced, policy: HoldPolicy
) -> Decimal | str:
    """The price per GPU-hour an order holds at, in its currency, or why it cannot be held."""
    if order.max_price_per_gpu_hour is not None:
        return order.max_price_per_gpu_hour
    if order.type is not OrderType.MARKET:
        return "price_required"
    best = await market_data.best_ask(conn, order.gpu, order.tier, order.region, order.currency)
    if best is None:
        return "no_offers"  # nothing to take, so nothing to measure the slippage from
    return holds.market_cap(best, policy.slippage_bps)


async def _in_wallet(
    conn: asyncpg.Connection, order: OrderPlaced, amount: int, now: datetime, policy: HoldPolicy
) -> int | str:
    """An amount of the order's currency in its wallet's, at the current rate (or why not)."""
    wallet = order.wallet_currency or order.currency
    if wallet is order.currency:
        return amount
    try:
        rate, rate_at = cross(await lease_repository.rates(conn), order.currency, wallet)
    except NoRate:
        return "fx_rate_missing"
    if holds.stale(rate_at, now, policy):
        return "fx_rate_stale"
    return convert(amount, rate)


async def on_order_placed(
    conn: asyncpg.Connection, event: Envelope[OrderPlaced], now: datetime, policy: HoldPolicy
) -> list[Wallet]:
    """Hold the first period of an order; answer ``order.funded`` or a rejection."""
    order = event.payload
    if await wallets.hold(conn, order.order_id) is not None:
        return []  # the same order again (another command id): already funded
    price = await _hold_price(conn, order, policy)
    if isinstance(price, str):
        await outbox.add(conn, SCHEMA, [_rejected(order, price, event, now)])
        return []
    amount = await _in_wallet(
        conn, order, holds.first_period_micros(price, order.gpus), now, policy
    )
    if isinstance(amount, str):
        await outbox.add(conn, SCHEMA, [_rejected(order, amount, event, now)])
        return []
    wallet = order.wallet_currency or order.currency
    transfer_id = f"hold:{order.order_id}"
    try:
        transfer: Transfer = transfers.hold(
            transfer_id,
            order.buyer_id,
            wallet,
            amount,
            event.occurred_at,
            reference=f"order {order.order_id}"[:200],
        )
        async with conn.transaction():  # a savepoint: a refusal leaves the transaction usable
            await post(conn, [transfer], event, now)
    except InsufficientFunds as exc:
        rejection = _rejected(order, "insufficient_funds", event, now, exc.shortfall_micros, wallet)
        await outbox.add(conn, SCHEMA, [rejection])
        return []
    except LedgerError as exc:
        await outbox.add(conn, SCHEMA, [_rejected(order, exc.reason.value, event, now)])
        return []
    await wallets.record_hold(
        conn,
        order.order_id,
        order.buyer_id,
        order.gpu,
        order.gpus,
        wallet,
        amount,
        event.occurred_at,
    )
    # The book applies the cap billing chose for a market order without one.
    funded = OrderFunded(
        order=order.model_copy(update={"max_price_per_gpu_hour": price}),
        hold_id=transfer_id,
        held=canonical(from_micros(amount)),
        held_currency=wallet,
    )
    message = outgoing(
        ORDERS_BOOK, order.gpu, funded, event, stable_id(event.event_id, "funded"), now
    )
    return await announce(conn, event, [(order.buyer_id, wallet)], now, [message])


async def on_best_ask(conn: asyncpg.Connection, event: Envelope[BestAskChanged]) -> list[Wallet]:
    """Keep the market's best asks for market orders without a cap."""
    await market_data.record(conn, event.payload)
    return []


async def on_order_cancel_requested(
    conn: asyncpg.Connection, event: Envelope[OrderCancelRequested], now: datetime
) -> list[Wallet]:
    """Forward a cancel to the book unchanged, behind the order's funding (same partition)."""
    request = event.payload
    forward = outgoing(
        ORDERS_BOOK, request.gpu, request, event, stable_id(event.event_id, "book"), now
    )
    await outbox.add(conn, SCHEMA, [forward])
    return []


def unfilled_micros(hold: wallets.Hold, filled_gpus: int) -> int:
    """What is left to release of a hold once ``filled_gpus`` keep their share for leases."""
    kept = hold.held_micros * min(filled_gpus, hold.gpus) // hold.gpus
    return max(hold.held_micros - kept - hold.released_micros, 0)


async def on_order_status(
    conn: asyncpg.Connection, event: Envelope[OrderStatusChanged], now: datetime
) -> list[Wallet]:
    """Release the unfilled part of an order's hold when the book ends the order."""
    change = event.payload
    if event.producer == PRODUCER or change.status not in RELEASING:
        return []
    hold = await wallets.hold(conn, change.order_id)
    if hold is None or hold.released_micros > 0:
        return []  # never funded (billing rejected it), or released already
    amount = unfilled_micros(hold, change.filled_gpus)
    if amount == 0:
        return []
    transfer = transfers.release(
        f"release:{hold.order_id}",
        hold.buyer_id,
        hold.currency,
        amount,
        event.occurred_at,
        reference=f"order {hold.order_id} {change.status.value}"[:200],
    )
    await post(conn, [transfer], event, now)
    await wallets.record_release(conn, hold.order_id, amount, event.occurred_at)
    return await announce(conn, event, [(hold.buyer_id, hold.currency)], now)
