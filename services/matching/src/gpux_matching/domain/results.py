"""What a command returns: fills, status changes and changed book levels (immutable tuples)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from gpux_contracts.capacity import InterruptionCause
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
    starts_at_micros: int
    """When the lease starts: ``at_micros``, except for a trade that preempted an
    interruptible lease, which starts when that lease's notice ends (its ``interrupt_at``)."""
    provisioning_s: int = 0
    """The offer's provisioning timeout (seconds; 0: the machines are ready at the start)."""


class Interruption(NamedTuple):
    """The book interrupts an interruptible lease: it ends at ``interrupt_at_micros``."""

    lease_id: str
    """The interrupted lease (the trade id that made it)."""
    offer_id: str
    buyer_id: str
    seller_id: str
    gpu: str
    gpus: int
    """The lease's GPUs: a lease is always interrupted whole."""
    cause: InterruptionCause
    at_micros: int
    """When the book decided (the command's time)."""
    interrupt_at_micros: int
    """``at_micros`` plus the offer's notice."""
    taken_by: tuple[str, ...]
    """The trades that take these GPUs at ``interrupt_at_micros`` (empty for a reclaim)."""


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
    """An offer's state after a command: its pool's capacity, leased and free GPUs."""

    offer_id: str
    status: OfferStatus
    gpus: int
    """The capacity: as last set by its seller, or what is leased while a lower count waits
    for leases to end."""
    sold: int
    """GPUs held by leases now."""
    remaining: int
    """Free GPUs: what can be sold now (``gpus - sold`` while the offer is kept, else 0)."""
    reason: Reason | None


class LeaseView(NamedTuple):
    """A lease an offer's pool holds (``MatchingEngine.pool``)."""

    gpus: int
    tier: str
    """The tier of the leg it was sold on."""
    interrupt_at_micros: int | None
    """When it is interrupted, once the book decided to; else None."""
    starts_after: str | None = None
    """For a trade that preempted a lease: that lease, while it still holds the GPUs."""


class PoolView(NamedTuple):
    """An offer's pool as the book keeps it (``MatchingEngine.pool``)."""

    capacity: int
    leased: int
    """GPUs held now: the leases' that are not waiting for a preempted lease to end, plus
    ``legacy``."""
    free: int
    """``capacity - leased``: what can be sold now."""
    leases: Mapping[str, LeaseView]
    """The leases the pool knows by id (trade id), oldest first."""
    legacy: int = 0
    """GPUs leased before the book knew leases by id (a snapshot of format 1)."""


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
    interruptions: tuple[Interruption, ...] = ()
    """Interruptible leases the command interrupted (preempted or reclaimed)."""
