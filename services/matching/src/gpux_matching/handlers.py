"""From input events to engine commands, and from engine results to events.

Planners turn accepted and withdrawn offers (``pricing.offers``) and funded orders and cancels
(``orders.book``) into commands for the engine of the input's partition; market sessions
(``market.sessions``) are kept in ``matching.market_state``: while a GPU or the whole market is
halted, a funded order for it is rejected with ``market_halted`` and never reaches the engine.
``status_messages`` gives the ``trade.executed``, ``order.status_changed`` and
``offer.status_changed`` events of a result, with ids derived from the input (or the command).
Where commands are applied, logged and snapshotted per partition: ``gpux_matching.partition``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

import asyncpg

from gpux_contracts.book import REFERENCE_CURRENCY
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.market import ALL_GPUS, HALTED_REASON, MarketState, MarketStateChanged
from gpux_contracts.money import Currency, from_micros, to_micros
from gpux_contracts.offers import (
    OfferAccepted,
    OfferStatus,
    OfferStatusChanged,
    OfferWithdrawn,
)
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
    TradeExecuted,
)
from gpux_contracts.topics import MARKET_TRADES, OFFERS_STATUS, ORDERS_STATUS
from gpux_matching.adapters import store
from gpux_matching.domain import (
    AddOffer,
    CancelOrder,
    ChangeOffer,
    Command,
    Fill,
    MatchingEngine,
    OfferUpdate,
    OrderUpdate,
    PlaceOrder,
    Reason,
    Result,
    WithdrawOffer,
    epoch_micros,
)
from gpux_matching.domain import OfferStatus as BookStatus
from gpux_matching.domain import OrderStatus as BookOrderStatus
from gpux_platform import outbox
from gpux_platform.broker import Outgoing
from gpux_platform.clock import Clock

SCHEMA = "matching"
PRODUCER = "matching"
REFERENCE = str(REFERENCE_CURRENCY)
"""The currency FX rates are quoted in; worth 1_000_000 reference micro-units per unit."""
REFERENCE_MICROS = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

log = logging.getLogger("gpux.matching")


class NotYetError(RuntimeError):
    """An input that cannot be applied yet (its currency has no FX rate); retried later."""


class Holder(Protocol):
    """What a planner reads: the engine of the input's partition and the clock."""

    engine: MatchingEngine
    clock: Clock


def fresh_engine() -> MatchingEngine:
    """An empty book that knows only the reference currency."""
    return MatchingEngine({REFERENCE: REFERENCE_MICROS})


def fx_rates(rate: RatePublished) -> dict[str, Decimal] | None:
    """The engine's rates from one published rate (reference micro-units per unit)."""
    if rate.quote != REFERENCE or rate.base == REFERENCE:
        return None
    return {str(rate.base): rate.rate * REFERENCE_MICROS}


def _order_status(update: OrderUpdate) -> OrderStatus | None:
    """The contract status of an engine order update (None: nothing to report)."""
    if update.status == BookOrderStatus.REJECTED:
        if update.reason == Reason.DUPLICATE_ID:
            return None  # the order is already on the book; it stays as it is
        if update.reason == Reason.EXPIRED_ON_ARRIVAL:
            return OrderStatus.EXPIRED  # a GTD order whose time ran out before it was funded
    return OrderStatus(str(update.status))


def _status(update: OfferUpdate) -> tuple[OfferStatus, str | None] | None:
    """The contract status of an engine update (None: nothing to report)."""
    if update.status == BookStatus.REJECTED:
        if update.reason == Reason.DUPLICATE_ID:
            return None  # the offer is already on the book; it stays as it is
        if update.reason == Reason.EXPIRED_ON_ARRIVAL:
            return OfferStatus.EXPIRED, None
        return OfferStatus.REJECTED, str(update.reason) if update.reason else None
    return OfferStatus(str(update.status)), None


async def status_messages(
    conn: asyncpg.Connection,
    result: Result,
    cause: Envelope[Any] | None,
    command_id: str,
    now: datetime,
) -> list[Outgoing]:
    """The events of one result, with ids derived from the input: ``trade.executed`` per fill,
    ``order.status_changed`` per order update and ``offer.status_changed`` per offer update."""
    if not (result.fills or result.orders or result.offers):
        return []
    base = cause.event_id if cause is not None else command_id
    envelope = enveloper(cause, command_id, now)

    messages = [
        Outgoing(
            MARKET_TRADES, fill.gpu, envelope(trade(fill), stable_id(base, "trade", fill.trade_id))
        )
        for fill in result.fills
    ]
    if result.orders:
        buyers = await store.order_owners(conn, [u.order_id for u in result.orders])
        for index, order in enumerate(result.orders):
            order_status = _order_status(order)
            buyer = buyers.get(order.order_id)
            if order_status is None or buyer is None:
                continue
            buyer_id, gpu = buyer
            changed = OrderStatusChanged(
                order_id=order.order_id,
                buyer_id=buyer_id,
                gpu=gpu,
                status=order_status,
                filled_gpus=order.filled,
                remaining_gpus=order.remaining,
                reason=None if order.reason is None else str(order.reason),
            )
            event_id = stable_id(base, "order", order.order_id, str(index))
            messages.append(Outgoing(ORDERS_STATUS, gpu, envelope(changed, event_id)))
    if result.offers:
        known = await store.owners(conn, [u.offer_id for u in result.offers])
        for index, update in enumerate(result.offers):
            status = _status(update)
            owner = known.get(update.offer_id)
            if status is None or owner is None:
                continue
            seller_id, gpu = owner
            payload = OfferStatusChanged(
                offer_id=update.offer_id,
                seller_id=seller_id,
                gpu=gpu,
                status=status[0],
                remaining_gpus=update.remaining,
                reason=status[1],
            )
            event_id = stable_id(base, update.offer_id, str(index))
            messages.append(Outgoing(OFFERS_STATUS, gpu, envelope(payload, event_id)))
    return messages


def enveloper(
    cause: Envelope[Any] | None, command_id: str, now: datetime
) -> Callable[[Any, str], Envelope[Any]]:
    """Wraps a payload of one command's result, caused by its input (or by the command)."""

    def envelope(payload: Any, event_id: str) -> Envelope[Any]:
        return wrap(
            payload,
            producer=PRODUCER,
            occurred_at=now,
            event_id=event_id,
            correlation_id=cause.correlation_id if cause is not None else None,
            causation_id=cause.event_id if cause is not None else command_id,
            trace=cause.trace if cause is not None else None,
        )

    return envelope


def trade(fill: Fill) -> TradeExecuted:
    """The contract event of one fill (its id is the engine's deterministic trade id)."""
    return TradeExecuted(
        trade_id=fill.trade_id,
        order_id=fill.order_id,
        offer_id=fill.offer_id,
        buyer_id=fill.buyer_id,
        seller_id=fill.seller_id,
        gpu=fill.gpu,
        tier=fill.tier,
        gpus=fill.gpus,
        price_per_gpu_hour=from_micros(fill.price_micros),
        currency=Currency(fill.currency),
        billing=fill.billing,
        hours=fill.hours,
        executed_at=_EPOCH + timedelta(microseconds=fill.at_micros),
    )


# Inputs to commands ---------------------------------------------------------------------------


async def plan_accepted(
    conn: asyncpg.Connection, book: Holder, event: Envelope[OfferAccepted]
) -> Command | None:
    """Revision 1 adds the offer; a later revision changes its price or GPU count."""
    accepted = event.payload
    offer = accepted.offer
    now = epoch_micros(book.clock.now())
    revision = await store.offer_revision(conn, offer.offer_id)
    price = to_micros(offer.price_per_gpu_hour)
    if accepted.revision == 1:
        if revision is not None:
            return None  # already given to the book
        await store.save_offer(conn, offer.offer_id, offer.seller_id, offer.gpu, 1)
        return AddOffer(
            now=now,
            offer_id=offer.offer_id,
            seller_id=offer.seller_id,
            gpu=offer.gpu,
            tier=str(offer.tier),
            price_micros=price,
            currency=str(offer.currency),
            gpus=offer.gpus,
            billing=str(offer.billing),
            region=offer.region,
            min_hours=offer.min_hours,
            available_until=(
                None if offer.available_until is None else epoch_micros(offer.available_until)
            ),
        )
    if revision is None or revision >= accepted.revision:
        return None  # unknown to the book, or an older revision than the one it holds
    await store.save_offer(conn, offer.offer_id, offer.seller_id, offer.gpu, accepted.revision)
    if book.engine.offer(offer.offer_id) is None:
        return None  # no longer on the book
    return ChangeOffer(now=now, offer_id=offer.offer_id, price_micros=price, gpus=offer.gpus)


async def plan_withdrawn(
    conn: asyncpg.Connection, book: Holder, event: Envelope[OfferWithdrawn]
) -> Command | None:
    """Withdraw an offer that is on the book."""
    if book.engine.offer(event.payload.offer_id) is None:
        return None
    return WithdrawOffer(now=epoch_micros(book.clock.now()), offer_id=event.payload.offer_id)


async def plan_funded(
    conn: asyncpg.Connection, book: Holder, event: Envelope[OrderFunded]
) -> Command | None:
    """A funded order is placed on the book (once: a redelivery places nothing)."""
    order = event.payload.order
    if await store.order_known(conn, order.order_id):
        return None
    await store.save_order(conn, order.order_id, order.buyer_id, order.gpu)
    if await market_halted(conn, order.gpu):
        await outbox.add(conn, SCHEMA, [halted_rejection(event, order, book.clock.now())])
        return None
    price = order.max_price_per_gpu_hour
    return PlaceOrder(
        now=epoch_micros(book.clock.now()),
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
    )


async def plan_cancel(
    conn: asyncpg.Connection, book: Holder, event: Envelope[OrderCancelRequested]
) -> Command | None:
    """Cancel an order's resting remainder (nothing to do when it no longer rests)."""
    if book.engine.order(event.payload.order_id) is None:
        return None
    return CancelOrder(now=epoch_micros(book.clock.now()), order_id=event.payload.order_id)


# Market sessions ------------------------------------------------------------------------------


async def record_market_state(
    conn: asyncpg.Connection, event: Envelope[MarketStateChanged]
) -> None:
    """Keep the latest state per scope (an older change than the one stored is ignored)."""
    changed = event.payload
    await conn.execute(
        """
        INSERT INTO matching.market_state (scope, state, reason, changed_at)
        VALUES ($1, $2, $3, $4)
        ON CONFLICT (scope) DO UPDATE
            SET state = EXCLUDED.state, reason = EXCLUDED.reason, changed_at = EXCLUDED.changed_at
            WHERE matching.market_state.changed_at <= EXCLUDED.changed_at
        """,
        changed.scope,
        changed.state.value,
        changed.reason,
        changed.changed_at,
    )
    log.info("market state", extra={"scope": changed.scope, "state": changed.state.value})


async def market_halted(conn: asyncpg.Connection, gpu: str) -> bool:
    """True while the whole market or this GPU model is halted (no row: open)."""
    halted = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM matching.market_state"
        " WHERE scope = ANY($1::text[]) AND state = $2)",
        [ALL_GPUS, gpu],
        MarketState.HALTED.value,
    )
    return bool(halted)


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
    envelope = wrap(
        changed,
        producer=PRODUCER,
        occurred_at=now,
        event_id=stable_id(event.event_id, "order", order.order_id, HALTED_REASON),
        correlation_id=event.correlation_id,
        causation_id=event.event_id,
        trace=event.trace,
    )
    return Outgoing(ORDERS_STATUS, order.gpu, envelope)
