"""Resting entries: mutable, slotted, one per offer leg or resting bid (engine-internal).

An offer is a pool of GPUs sold in one or two legs, each an ``OfferEntry`` on its tier's
book. The leg the engine keeps the offer by (``_offers``) is its *primary*: the leg of the
offer's own tier. An on-demand offer with an interruptible price has a second leg, its
``twin``, at that price. Both legs carry the pool's counts (capacity, leased, free, trade
counter) so that the fill loops read them where they are; every change to one is copied to
the other (``Filling._mirror``). The leases dict and the rare state (``PoolExtra``) are one
object shared by both legs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpux_contracts.capacity import InterruptionCause
from gpux_matching.domain.results import Level
from gpux_matching.domain.types import Side

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_SIDE_ASK = Side.ASK
_SIDE_BID = Side.BID

NO_HOURS = 1 << 62
"""Stands in for an open-ended rental: it satisfies every minimum."""

_new = tuple.__new__


Lease = tuple[int, str, str]
"""A lease a pool holds, what one fill sold (its trade id is the lease id): (GPUs, the tier
of the leg it was sold on, buyer id). A plain tuple of atoms, not a named one: the garbage
collector stops tracking those, and a pool keeps one per running lease."""


@dataclass(slots=True, eq=False)
class Notice:
    """An interruptible lease the book is interrupting."""

    interrupt_at: int
    cause: InterruptionCause
    claims: dict[str, int]
    """Preempting trade id -> the GPUs of this lease it takes when the lease ends."""


@dataclass(slots=True, eq=False)
class PoolExtra:
    """The rare part of a pool's state, made when first needed and shared by its legs."""

    notice_s: int = 120
    cut: int = 0
    """GPUs of the capacity to retire as leases give them back (a count set below what
    was leased); while it is above 0 the pool has no free GPU."""
    legacy: int = 0
    """Leased GPUs of leases the book does not know by id (restored from format 1)."""
    notices: dict[str, Notice] = field(default_factory=dict)
    """Leases being interrupted, by id."""
    claims: dict[str, str] = field(default_factory=dict)
    """Preempting trades whose lease is still running: trade id -> that lease's id."""
    gone: set[str] = field(default_factory=set)
    """Leases released while ``legacy`` is above 0: a repeated release changes nothing."""
    provisioning_s: int = 0
    """The offer's provisioning timeout, copied onto each of its trades (0: ready at the
    lease's start, also what a pool without rare state means)."""


# eq=False: entries are dict keys of their level's queue, by identity. init=False: the
# constructor below sets every field in one function (no __post_init__ call, no default
# factories): an offer is made on every add_offer.
@dataclass(slots=True, eq=False, init=False)
class OfferEntry:
    """One leg of a seller's offer. ``key`` is its book position: the reference price.

    ``gpus`` is the pool's capacity, ``sold`` what its leases hold, ``remaining`` its free
    GPUs; a leg rests on its book exactly while the pool has free GPUs (and the engine
    keeps the offer with none: exhausted).
    """

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
    born: int = field(init=False, default=0)
    """The offer's arrival (sequence): older pools are preempted first at one price."""
    leases: dict[str, Lease] = field(init=False, default_factory=dict)
    """The pool's leases by id, oldest first (shared by both legs)."""
    twin: OfferEntry | None = field(init=False, default=None)
    """The pool's other leg, if it has two."""
    extra: PoolExtra | None = field(init=False, default=None)
    """The pool's rare state (shared by both legs), None until needed."""

    def __init__(  # noqa: PLR0913, PLR0917 - the fields, as a dataclass would take them
        self,
        offer_id: str,
        seller_id: str,
        gpu: str,
        tier: str,
        price_micros: int,
        currency: str,
        gpus: int,
        billing: str,
        region: str | None,
        min_hours: int,
        available_until: int | None,
    ) -> None:
        self.offer_id = offer_id
        self.seller_id = seller_id
        self.gpu = gpu
        self.tier = tier
        self.price_micros = price_micros
        self.currency = currency
        self.gpus = gpus
        self.billing = billing
        self.region = region
        self.min_hours = min_hours
        self.available_until = available_until
        self.sold = self.key = self.seq = self.taken = self.born = 0
        self.remaining = gpus
        self.level = _new(Level, (gpu, tier, _SIDE_ASK, currency, price_micros))
        self.leases = {}
        self.twin = self.extra = None


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
    min_reliability_bp: int | None = None
    """Fill only from pools whose seller's rate is at least this (``reliability``); None:
    from any seller."""
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
