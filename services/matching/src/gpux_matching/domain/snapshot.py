"""Entries as plain data (dicts of str, int, None and lists) for snapshots, and back.

The format is versioned; a snapshot restores to an engine that behaves exactly like the one
it was taken from (priority sequence, trade-id counters and rates included). ``json_parts``
writes a capture's JSON in slices, so a big book can be encoded a piece at a time.

Format 2 (capacity) keeps every offer's pool, exhausted ones included: its legs, leases,
interruptions and pending claims. Format 1 (before capacity) is still read: its offers were
live, each in its own tier; what they had sold becomes the pool's "legacy" leased GPUs.
A pool's ``provisioning_s`` came later within format 2: a snapshot without it reads as 0
(ready at the lease's start, what every offer was before). So did sellers' reliability
rates and a bid's ``min_reliability_bp``: a snapshot without them reads as no rate known and
no minimum (what every bid was before); and later the totals those rates were counted over
(``reliability_totals``): a snapshot without them reads as total 0 for each rate, which any
rate with a total replaces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from gpux_contracts.capacity import InterruptionCause
from gpux_matching.domain.entries import BidEntry, Notice, OfferEntry, PoolExtra
from gpux_matching.domain.types import Tier

FORMAT = 2
"""Bumped whenever the layout below changes; ``restore`` refuses other versions."""
FORMAT_BEFORE_CAPACITY = 1
"""The layout before capacity, still restored (``offer_from_plain(..., legacy=True)``)."""

Plain = dict[str, Any]


OFFER_FIELDS = (
    "offer_id",
    "seller_id",
    "gpu",
    "tier",
    "price_micros",
    "currency",
    "gpus",
    "sold",
    "remaining",
    "billing",
    "region",
    "min_hours",
    "available_until",
    "seq",
    "taken",
    "born",
)
"""An offer's primary leg's fields, in order: the start of what a capture copies."""
POOL_FIELDS = (
    "interruptible_price_micros",
    "interruptible_seq",
    "leases",
    "notice_s",
    "cut",
    "legacy",
    "notices",
    "gone",
    "provisioning_s",
)
"""What follows them in a capture's row: the twin leg, the leases and the rare state."""
BID_FIELDS = (
    "order_id",
    "buyer_id",
    "gpu",
    "tier",
    "price_micros",
    "currency",
    "gpus",
    "filled",
    "remaining",
    "region",
    "hours",
    "expires_at",
    "seq",
    "taken",
    "min_reliability_bp",
)
"""The fields of ``bid_to_plain``, in order: what a capture copies of each resting bid."""

_leg_row = attrgetter(*OFFER_FIELDS)
"""A leg's fields as one tuple of immutable values (a C-level copy, no dict)."""
bid_row = attrgetter(*BID_FIELDS)
"""A bid's fields as one tuple of immutable values."""

_ROW_FIELDS = OFFER_FIELDS + POOL_FIELDS
_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)
_SECOND = "second"
_TIER = OFFER_FIELDS.index("tier")
_MIN_HOURS = OFFER_FIELDS.index("min_hours")
_OFFER_ARGS = itemgetter(*(f.name for f in fields(OfferEntry) if f.init))
"""An offer's constructor arguments, in order, out of its plain data."""
_BID_ARGS = itemgetter(*(f.name for f in fields(BidEntry) if f.init))
"""A bid's constructor arguments, in order, out of its plain data."""
_COUNTERS = ("remaining", "seq", "taken")
"""What an entry counts as it trades and rests (besides ``sold`` / ``filled``)."""
_NO_EXTRA = (120, 0, 0, (), (), 0)
"""The rare state of a pool that has none (``PoolExtra``'s defaults)."""


def offer_row(offer: OfferEntry) -> tuple[Any, ...]:
    """An offer's pool (its primary leg, twin, leases and rare state) as one tuple of
    immutable values."""
    twin, extra = offer.twin, offer.extra
    rare: tuple[Any, ...] = _NO_EXTRA
    if extra is not None:
        notices = tuple(
            (lease_id, n.interrupt_at, n.cause, tuple(n.claims.items()))
            for lease_id, n in extra.notices.items()
        )
        rare = (
            extra.notice_s,
            extra.cut,
            extra.legacy,
            notices,
            tuple(sorted(extra.gone)),
            extra.provisioning_s,
        )
    return (
        *_leg_row(offer),
        None if twin is None else twin.price_micros,
        None if twin is None else twin.seq,
        tuple(offer.leases.items()),
        *rare,
    )


def offer_to_plain(offer: OfferEntry) -> Plain:
    """An offer's pool as plain data."""
    return offer_row_to_plain(offer_row(offer))


def offer_from_plain(data: Plain, *, legacy: bool = False) -> OfferEntry:
    """The inverse of ``offer_to_plain``: the primary leg, with its twin, leases and rare
    state (book keys are set by the engine). ``legacy``: ``data`` is of format 1."""
    offer = OfferEntry(*_OFFER_ARGS({**data, "min_hours": data["min_hours"] or 0}))
    _restore_counters(offer, data, "sold")
    if legacy:
        offer.born = offer.seq
        if offer.tier == _INTERRUPTIBLE:
            offer.billing = _SECOND
        if offer.sold:
            offer.extra = PoolExtra(legacy=offer.sold)
        return offer
    offer.born = data["born"]
    offer.leases = {i: (gpus, tier, buyer) for i, gpus, tier, buyer in data["leases"]}
    provisioning_s = data.get("provisioning_s", 0)  # absent: taken before the delivery issue
    rare = (data["notice_s"], data["cut"], data["legacy"], data["notices"], data["gone"])
    if (
        rare != (120, 0, 0, [], [])
        or provisioning_s
        or data["interruptible_price_micros"] is not None
    ):
        extra = offer.extra = PoolExtra(
            data["notice_s"], data["cut"], data["legacy"], provisioning_s=provisioning_s
        )
        for lease_id, interrupt_at, cause, claims in data["notices"]:
            taken = dict(claims)
            extra.notices[lease_id] = Notice(interrupt_at, InterruptionCause(cause), taken)
            extra.claims.update(dict.fromkeys(taken, lease_id))
        extra.gone.update(data["gone"])
    if data["interruptible_price_micros"] is not None:
        twin = twin_of(offer, data["interruptible_price_micros"])
        twin.seq = data["interruptible_seq"]
    return offer


def twin_of(offer: OfferEntry, price_micros: int) -> OfferEntry:
    """A new interruptible leg of ``offer``'s pool at ``price_micros``, joined to it: the
    same counts, the same leases and rare state (which it must have), billed per second."""
    twin = OfferEntry(
        offer.offer_id,
        offer.seller_id,
        offer.gpu,
        _INTERRUPTIBLE,
        price_micros,
        offer.currency,
        offer.gpus,
        _SECOND,
        offer.region,
        offer.min_hours,
        offer.available_until,
    )
    twin.sold, twin.remaining, twin.taken, twin.born = (
        offer.sold,
        offer.remaining,
        offer.taken,
        offer.born,
    )
    twin.leases, twin.extra = offer.leases, offer.extra
    twin.twin, offer.twin = offer, twin
    return twin


def bid_to_plain(bid: BidEntry) -> Plain:
    """A resting order as plain data (always a limit order; GTD when it has ``expires_at``)."""
    return bid_row_to_plain(bid_row(bid))


def bid_from_plain(data: Plain) -> BidEntry:
    """The inverse of ``bid_to_plain`` (the book key is set by the engine)."""
    if "min_reliability_bp" not in data:  # taken before the reliability issue: no minimum
        data = {**data, "min_reliability_bp": None}
    bid = BidEntry(*_BID_ARGS(data))
    _restore_counters(bid, data, "filled")
    return bid


def _restore_counters(entry: OfferEntry | BidEntry, data: Plain, traded: str) -> None:
    for name in (traded, *_COUNTERS):
        setattr(entry, name, data[name])


class Capture(NamedTuple):
    """An engine's state copied at one consistent point, cheaply: rows of immutable values.

    Turning it into a snapshot (``plain``, JSON) is the slow part and can happen later,
    while the engine goes on: nothing in a capture refers to a live entry.
    """

    seq: int
    rates: dict[str, int | str]
    reliability: dict[str, int]
    """Each rated seller's rate in basis points, by seller id."""
    reliability_totals: dict[str, int]
    """The total each seller's rate was counted over, by seller id (none: 0)."""
    offers: list[tuple[Any, ...]]
    """``offer_row`` of each offer the book keeps, in no particular order."""
    orders: list[tuple[Any, ...]]
    """``bid_row`` of each resting bid, in no particular order."""


def offer_row_to_plain(row: tuple[Any, ...]) -> Plain:
    """An ``offer_row`` as ``offer_to_plain`` gives it."""
    data = dict(zip(_ROW_FIELDS, row, strict=True))
    data["tier"] = str(row[_TIER])
    data["min_hours"] = row[_MIN_HOURS] or None
    data["leases"] = [[i, gpus, str(tier), buyer] for i, (gpus, tier, buyer) in data["leases"]]
    data["notices"] = [
        [lease_id, at, str(cause), [list(claim) for claim in claims]]
        for lease_id, at, cause, claims in data["notices"]
    ]
    data["gone"] = list(data["gone"])
    return data


def bid_row_to_plain(row: tuple[Any, ...]) -> Plain:
    """A ``bid_row`` as ``bid_to_plain`` gives it."""
    data = dict(zip(BID_FIELDS, row, strict=True))
    data["tier"] = str(data["tier"])
    return data


def snapshot_from(capture: Capture) -> Plain:
    """The snapshot of a capture: exactly what ``snapshot()`` gave at that point."""
    return {
        "format": FORMAT,
        "seq": capture.seq,
        "rates": dict(capture.rates),
        "reliability": dict(capture.reliability),
        "reliability_totals": dict(capture.reliability_totals),
        "offers": [offer_row_to_plain(r) for r in sorted(capture.offers, key=_OFFER_SEQ)],
        "orders": [bid_row_to_plain(r) for r in sorted(capture.orders, key=_BID_SEQ)],
    }


_OFFER_SEQ = itemgetter(OFFER_FIELDS.index("seq"))
_BID_SEQ = itemgetter(BID_FIELDS.index("seq"))


CHUNK = 1000
"""Entries encoded per piece of ``json_parts`` (about 5 ms of work)."""


def json_parts(capture: Capture, chunk: int = CHUNK) -> Iterator[str]:
    """The snapshot's JSON text in pieces of at most ``chunk`` entries each.

    Joined, the pieces parse to ``snapshot_from(capture)`` except for the order of offers and
    orders (as captured, not by sequence): ``restore`` sorts them itself.
    """
    head = {
        "format": FORMAT,
        "seq": capture.seq,
        "rates": capture.rates,
        "reliability": capture.reliability,
        "reliability_totals": capture.reliability_totals,
    }
    yield json.dumps(head)[:-1] + ', "offers": ['
    for name, rows, to_plain in (
        ("offers", capture.offers, offer_row_to_plain),
        ("orders", capture.orders, bid_row_to_plain),
    ):
        if name == "orders":
            yield '], "orders": ['
        for start in range(0, len(rows), chunk):
            text = json.dumps([to_plain(row) for row in rows[start : start + chunk]])[1:-1]
            yield text if start == 0 else "," + text
    yield "]}"
