"""What a command returns: fills, status changes and changed book levels (immutable tuples)."""

from __future__ import annotations

from typing import NamedTuple

from gpux_matching.domain.types import OfferStatus, OrderStatus, Reason, Side


class Fill(NamedTuple):
    """One trade: some GPUs of one offer to one order, at the resting side's price."""

    trade_id: str
    """Deterministic: ``<taker id>:b<n>`` (taker bid) or ``<taker id>:a<n>`` (taker offer)."""
    order_id: str
    offer_id: str
    buyer_id: str
    seller_id: str
    gpu: str
    tier: str
    """The offer's tier (an ``any`` order learns here which tier it got)."""
    gpus: int
    price_micros: int
    """Per GPU-hour, in ``currency``: the resting side's own price."""
    currency: str
    billing: str
    """The offer's billing granularity (``hour`` or ``second``)."""
    hours: int | None
    """The order's rental length; ``None`` is open-ended."""
    taker: Side
    """Which side arrived and took liquidity."""
    at_micros: int
    """The command's time, epoch microseconds."""


class OrderUpdate(NamedTuple):
    """An order's state after a command; ``gpus == filled + remaining + cancelled`` always."""

    order_id: str
    status: OrderStatus
    gpus: int
    filled: int
    remaining: int
    """Still resting on the book."""
    cancelled: int
    """Will never fill: cancelled, expired, killed or rejected."""
    reason: Reason | None


class OfferUpdate(NamedTuple):
    """An offer's state after a command; ``remaining`` is what is still for sale."""

    offer_id: str
    status: OfferStatus
    gpus: int
    """The offer's total GPU count as last set by its seller."""
    sold: int
    remaining: int
    reason: Reason | None


class Level(NamedTuple):
    """One aggregated price level: one side of one book at one price in one currency."""

    gpu: str
    tier: str
    """Offers: on_demand or interruptible; bids may also rest as ``any``."""
    side: Side
    currency: str
    price_micros: int


class LevelChange(NamedTuple):
    """A level's GPUs after a command (``gpus == 0``: the level is gone)."""

    level: Level
    gpus: int


class Result(NamedTuple):
    """Everything one command changed, in the order it happened."""

    fills: tuple[Fill, ...]
    orders: tuple[OrderUpdate, ...]
    offers: tuple[OfferUpdate, ...]
    levels: tuple[LevelChange, ...]
    rejection: Reason | None
    """Set when the command itself was refused (nothing else changed but expiries)."""
