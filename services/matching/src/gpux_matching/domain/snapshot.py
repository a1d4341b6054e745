"""Entries as plain data (dicts of str, int, None) for snapshots, and back.

The format is versioned; a snapshot restores to an engine that behaves exactly like the one
it was taken from (priority sequence, trade-id counters and rates included). ``json_parts``
writes a capture's JSON in slices, so a big book can be encoded a piece at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from gpux_matching.domain.entries import BidEntry, OfferEntry

FORMAT = 1
"""Bumped whenever the layout below changes; ``restore`` refuses other versions."""

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
)
"""The fields of ``offer_to_plain``, in order: what a capture copies of each offer."""
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
)
"""The fields of ``bid_to_plain``, in order: what a capture copies of each resting bid."""

offer_row = attrgetter(*OFFER_FIELDS)
"""An offer's fields as one tuple of immutable values (a C-level copy, no dict)."""
bid_row = attrgetter(*BID_FIELDS)
"""A bid's fields as one tuple of immutable values."""

_TIER = OFFER_FIELDS.index("tier")
_MIN_HOURS = OFFER_FIELDS.index("min_hours")
_OFFER_ARGS = itemgetter(*(f.name for f in fields(OfferEntry) if f.init))
"""An offer's constructor arguments, in order, out of its plain data."""
_BID_ARGS = itemgetter(*(f.name for f in fields(BidEntry) if f.init))
"""A bid's constructor arguments, in order, out of its plain data."""
_COUNTERS = ("remaining", "seq", "taken")
"""What an entry counts as it trades and rests (besides ``sold`` / ``filled``)."""


def offer_to_plain(offer: OfferEntry) -> Plain:
    """A live offer as plain data."""
    return offer_row_to_plain(offer_row(offer))


def offer_from_plain(data: Plain) -> OfferEntry:
    """The inverse of ``offer_to_plain`` (the book key is set by the engine)."""
    offer = OfferEntry(*_OFFER_ARGS({**data, "min_hours": data["min_hours"] or 0}))
    _restore_counters(offer, data, "sold")
    return offer


def bid_to_plain(bid: BidEntry) -> Plain:
    """A resting order as plain data (always a limit order; GTD when it has ``expires_at``)."""
    return bid_row_to_plain(bid_row(bid))


def bid_from_plain(data: Plain) -> BidEntry:
    """The inverse of ``bid_to_plain`` (the book key is set by the engine)."""
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
    offers: list[tuple[Any, ...]]
    """``offer_row`` of each live offer, in no particular order."""
    orders: list[tuple[Any, ...]]
    """``bid_row`` of each resting bid, in no particular order."""


def offer_row_to_plain(row: tuple[Any, ...]) -> Plain:
    """An ``offer_row`` as ``offer_to_plain`` gives it."""
    data = dict(zip(OFFER_FIELDS, row, strict=True))
    data["tier"] = str(row[_TIER])
    data["min_hours"] = row[_MIN_HOURS] or None
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
    head = {"format": FORMAT, "seq": capture.seq, "rates": capture.rates}
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
