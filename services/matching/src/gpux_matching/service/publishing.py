"""What a unit's commands announce: trades, order and offer statuses, book levels.

Per command's result: ``trade.executed`` per fill (with ``starts_at`` when the trade takes a
preempted lease's GPUs at its ``interrupt_at``), ``order.status_changed`` per order update,
``offer.status_changed`` per offer update (its capacity, leased and free GPUs) and
``lease.interruption_requested`` per interruption, to billing on ``billing.commands`` keyed
by the lease's buyer (``announce``, ``status_messages``). Per book a
unit changed: one ``book.levels_changed`` with its levels as the unit left them, at most
``BOOK_DEPTH`` per side (``announce_book``; the journal decides which books). Event ids derive
from the command's cause (or, for the book's own commands, from the command's sequence) and,
for a book, from the unit's last command that changed it, so a redelivered or replayed input
announces nothing new; ``sequence`` of a book's levels is that command's log sequence, so
readers can drop an older state of a book that reaches them after a newer one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Any

from gpux_contracts.book import BOOK_DEPTH, BookLevel, BookLevelsChanged, book_key
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.money import (
    MICROS_PER_UNIT,
    REFERENCE_CURRENCY,
    Currency,
    canonical,
    from_micros,
)
from gpux_contracts.offers import OfferStatus, OfferStatusChanged, Tier
from gpux_contracts.orders import OrderStatus, OrderStatusChanged, TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    MARKET_BOOK,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_STATUS,
)
from gpux_matching.domain import BookLevel as EngineLevel
from gpux_matching.domain import (
    BookLevels,
    Fill,
    Interruption,
    OfferUpdate,
    OrderUpdate,
    Rate,
    Reason,
    Result,
)
from gpux_matching.domain import OfferStatus as BookOfferStatus
from gpux_matching.domain import OrderStatus as BookOrderStatus
from gpux_platform.broker import Outgoing

if TYPE_CHECKING:
    from gpux_matching.service.journal import Logged

PRODUCER = "matching"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROS = Decimal(MICROS_PER_UNIT)

Owners = Mapping[str, tuple[str, str]]
"""Order id -> (buyer id, gpu), or offer id -> (seller id, gpu)."""
Enveloper = Callable[[Any, str], Envelope[Any]]


def enveloper(cause: Envelope[Any] | None, command_id: str, now: datetime) -> Enveloper:
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


def announce(entry: Logged, seq: int, buyers: Owners, sellers: Owners) -> list[Outgoing]:
    """The trades and statuses of one logged command, now that it has its sequence number."""
    command_id = f"matching-command-{seq}"  # seq is global: unique across partitions
    return status_messages(
        entry.result, entry.cause, command_id, entry.now, buyers=buyers, sellers=sellers
    )


def announce_book(
    entry: Logged, seq: int, levels: BookLevels, rates: Mapping[str, Rate]
) -> Outgoing:
    """The ``market.book`` record of a book's levels, caused by ``entry`` (the last command
    of the unit that changed the book, logged as ``seq``)."""
    command_id = f"matching-command-{seq}"
    base = entry.cause.event_id if entry.cause is not None else command_id
    envelope = enveloper(entry.cause, command_id, entry.now)
    (message,) = book_messages([levels], rates, seq, entry.now, envelope=envelope, base=base)
    return message


# Statuses and trades ---------------------------------------------------------------------------


def order_status(update: OrderUpdate) -> OrderStatus | None:
    """The contract status of an engine order update (None: nothing to report)."""
    if update.status == BookOrderStatus.REJECTED:
        if update.reason == Reason.DUPLICATE_ID:
            return None  # the order is already on the book; it stays as it is
        if update.reason == Reason.EXPIRED_ON_ARRIVAL:
            return OrderStatus.EXPIRED  # a GTD order whose time ran out before it was funded
    return OrderStatus(str(update.status))


def offer_status(update: OfferUpdate) -> tuple[OfferStatus, str | None] | None:
    """The contract status and reason of an engine offer update (None: nothing to report)."""
    if update.status == BookOfferStatus.REJECTED:
        if update.reason == Reason.DUPLICATE_ID:
            return None  # the offer is already on the book; it stays as it is
        if update.reason == Reason.EXPIRED_ON_ARRIVAL:
            return OfferStatus.EXPIRED, None
        return OfferStatus.REJECTED, str(update.reason) if update.reason else None
    return OfferStatus(str(update.status)), None


def instant(micros: int) -> datetime:
    """An engine instant (epoch microseconds) as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=micros)


def trade(fill: Fill) -> TradeExecuted:
    """The contract event of one fill (its id is the engine's deterministic trade id); a
    trade that starts later than it was made (a preempted lease's GPUs) says when."""
    starts = fill.starts_at_micros
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
        executed_at=instant(fill.at_micros),
        starts_at=None if starts == fill.at_micros else instant(starts),
        provisioning_timeout_seconds=fill.provisioning_s,
    )


def interruption_requested(interruption: Interruption) -> LeaseInterruptionRequested:
    """The command to billing that interrupts a lease at the instant the book decided."""
    return LeaseInterruptionRequested(
        lease_id=interruption.lease_id,
        buyer_id=interruption.buyer_id,
        offer_id=interruption.offer_id,
        seller_id=interruption.seller_id,
        gpu=interruption.gpu,
        gpus=interruption.gpus,
        cause=InterruptionCause(interruption.cause),
        noticed_at=instant(interruption.at_micros),
        interrupt_at=instant(interruption.interrupt_at_micros),
        taken_by=list(interruption.taken_by),
    )


def status_messages(
    result: Result,
    cause: Envelope[Any] | None,
    command_id: str,
    now: datetime,
    *,
    buyers: Owners,
    sellers: Owners,
) -> list[Outgoing]:
    """The trades and statuses of one result, with ids derived from its input (or the
    command); an update of an order or offer whose owner is unknown is not reported."""
    if not (result.fills or result.orders or result.offers or result.interruptions):
        return []
    base = cause.event_id if cause is not None else command_id
    envelope = enveloper(cause, command_id, now)
    messages = [
        Outgoing(
            MARKET_TRADES, fill.gpu, envelope(trade(fill), stable_id(base, "trade", fill.trade_id))
        )
        for fill in result.fills
    ]
    messages += _order_messages(result.orders, base, envelope, buyers)
    messages += _offer_messages(result.offers, base, envelope, sellers)
    messages += [
        Outgoing(
            BILLING_COMMANDS,
            interruption.buyer_id,
            envelope(
                interruption_requested(interruption),
                stable_id(base, "interruption", interruption.lease_id),
            ),
        )
        for interruption in result.interruptions
    ]
    return messages


def _order_messages(
    updates: Sequence[OrderUpdate], base: str, envelope: Enveloper, buyers: Owners
) -> list[Outgoing]:
    messages = []
    for index, update in enumerate(updates):
        status = order_status(update)
        buyer = buyers.get(update.order_id)
        if status is None or buyer is None:
            continue
        buyer_id, gpu = buyer
        changed = OrderStatusChanged(
            order_id=update.order_id,
            buyer_id=buyer_id,
            gpu=gpu,
            status=status,
            filled_gpus=update.filled,
            remaining_gpus=update.remaining,
            reason=None if update.reason is None else str(update.reason),
        )
        event_id = stable_id(base, "order", update.order_id, str(index))
        messages.append(Outgoing(ORDERS_STATUS, gpu, envelope(changed, event_id)))
    return messages


def _offer_messages(
    updates: Sequence[OfferUpdate], base: str, envelope: Enveloper, sellers: Owners
) -> list[Outgoing]:
    messages = []
    for index, update in enumerate(updates):
        status = offer_status(update)
        owner = sellers.get(update.offer_id)
        if status is None or owner is None:
            continue
        seller_id, gpu = owner
        changed = OfferStatusChanged(
            offer_id=update.offer_id,
            seller_id=seller_id,
            gpu=gpu,
            status=status[0],
            remaining_gpus=update.remaining,
            reason=status[1],
            capacity_gpus=update.gpus,
            leased_gpus=update.sold,
        )
        event_id = stable_id(base, update.offer_id, str(index))
        messages.append(Outgoing(OFFERS_STATUS, gpu, envelope(changed, event_id)))
    return messages


# Book levels -----------------------------------------------------------------------------------


def converted(price_micros: int, rates: Mapping[str, Rate]) -> dict[Currency, Decimal]:
    """A reference price in every known currency (half-to-even to the micro-unit)."""
    out: dict[Currency, Decimal] = {}
    for code, rate in sorted(rates.items()):
        if code not in Currency.__members__:
            continue
        micros = (Decimal(price_micros) * _MICROS / Decimal(rate)).to_integral_value(
            rounding=ROUND_HALF_EVEN
        )
        out[Currency(code)] = canonical(from_micros(int(micros)))
    return out


Shown = tuple[BookLevels, Mapping[str, Rate] | None]
"""What a book's published levels say: the levels, and the rates their prices were converted
at (None for an empty book, whose record no rate changes)."""


def shown(levels: BookLevels, rates: Mapping[str, Rate]) -> Shown:
    """What a ``book.levels_changed`` of ``levels`` at ``rates`` says (to compare cheaply)."""
    return levels, rates if levels.bids or levels.asks else None


def _level(level: EngineLevel, rates: Mapping[str, Rate]) -> BookLevel:
    return BookLevel(
        price=canonical(from_micros(level.price_micros)),
        currency=REFERENCE_CURRENCY,
        prices=converted(level.price_micros, rates),
        gpus=level.gpus,
        orders=level.entries,
    )


def levels_changed(
    levels: BookLevels, rates: Mapping[str, Rate], sequence: int, now: datetime
) -> BookLevelsChanged:
    """The contract event of one book's levels."""
    return BookLevelsChanged(
        gpu=levels.gpu,
        tier=Tier(levels.tier),
        bids=[_level(level, rates) for level in levels.bids],
        asks=[_level(level, rates) for level in levels.asks],
        depth=BOOK_DEPTH,
        sequence=sequence,
        as_of=now,
    )


def book_messages(
    books: Sequence[BookLevels],
    rates: Mapping[str, Rate],
    sequence: int,
    now: datetime,
    *,
    envelope: Enveloper,
    base: str,
) -> list[Outgoing]:
    """The ``market.book`` records of the given books' levels; ``envelope`` wraps a payload
    with an event id, derived here from ``base`` and the book."""
    messages = []
    for levels in books:
        payload = levels_changed(levels, rates, sequence, now)
        key = book_key(levels.gpu, levels.tier)
        messages.append(Outgoing(MARKET_BOOK, key, envelope(payload, stable_id(base, "book", key))))
    return messages
