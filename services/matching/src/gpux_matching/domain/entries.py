"""Resting entries: mutable, slotted, one per live offer or resting bid (engine-internal)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpux_matching.domain.results import Level
from gpux_matching.domain.types import Side

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_SIDE_ASK = Side.ASK
_SIDE_BID = Side.BID

NO_HOURS = 1 << 62
"""Stands in for an open-ended rental: it satisfies every minimum."""

_new = tuple.__new__


# eq=False: entries are dict keys of their level's queue, by identity.
@dataclass(slots=True, eq=False)
class OfferEntry:
    """A seller's live offer. ``key`` is its book position: the reference price."""

    offer_id: str
    seller_id: str
    gpu: str
    tier: str
    price_micros: int
    currency: str
    gpus: int
    billing: str
    region: str | None
    min_hours: int
    """0 when the offer has no minimum."""
    available_until: int | None
    sold: int = field(init=False, default=0)
    remaining: int = field(init=False, default=0)
    key: int = field(init=False, default=0)
    seq: int = field(init=False, default=0)
    taken: int = field(init=False, default=0)
    """Fills this offer made as the taker so far: the next trade id's index."""
    level: Level = field(init=False)

    def __post_init__(self) -> None:
        self.remaining = self.gpus
        self.level = _new(Level, (self.gpu, self.tier, _SIDE_ASK, self.currency, self.price_micros))


@dataclass(slots=True, eq=False)
class BidEntry:
    """A buyer's order. ``key`` is its book position: minus its reference limit.

    Only limit GTC/GTD orders rest, so the entry keeps no order type or time in force: a
    resting entry with ``expires_at`` is GTD.
    """

    order_id: str
    buyer_id: str
    gpu: str
    tier: str
    price_micros: int
    """Limit (or a market order's cap); 0 for a market order without a cap."""
    currency: str
    gpus: int
    region: str | None
    hours: int | None
    expires_at: int | None = None
    filled: int = field(init=False, default=0)
    remaining: int = field(init=False, default=0)
    hours_or_max: int = field(init=False, default=NO_HOURS)
    key: int = field(init=False, default=0)
    seq: int = field(init=False, default=0)
    taken: int = field(init=False, default=0)
    """Fills this order made as the taker so far: the next trade id's index."""
    level: Level = field(init=False)

    def __post_init__(self) -> None:
        self.remaining = self.gpus
        self.hours_or_max = NO_HOURS if self.hours is None else self.hours
        self.level = _new(Level, (self.gpu, self.tier, _SIDE_BID, self.currency, self.price_micros))
