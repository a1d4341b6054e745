"""One side of one book: sorted price levels, each a FIFO of resting entries.

Keys ascend from best to worst (asks: reference price; bids: minus reference limit), so both
sides share one structure: a sorted list of the *negated* keys (bisect; the best level is the
last item, so taking out the best level is a ``pop()``, not a shift of the whole list) and a
dict key -> level. A level is an insertion-ordered dict of entries (values unused): FIFO
iteration like a queue, but any entry leaves in O(1) (a cancel deep in a level is no scan).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Generic, Protocol, TypeVar

from gpux_matching.domain.entries import BidEntry, OfferEntry
from gpux_matching.domain.types import Tier


class _Ranked(Protocol):
    key: int
    seq: int


E = TypeVar("E", bound=_Ranked)

_PRIORITY = attrgetter("key", "seq")


class BookSide(Generic[E]):
    """Price levels of one side; within a level, entries in arrival (``seq``) order.

    ``keys`` holds minus each level's key, ascending: ``-keys[-1]`` is the best key.
    """

    __slots__ = ("keys", "levels")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.levels: dict[int, dict[E, None]] = {}

    def append(self, entry: E) -> None:
        """Rest an entry behind everything at its key (its ``seq`` must be the newest there)."""
        key = entry.key
        level = self.levels.get(key)
        if level is None:
            self.levels[key] = {entry: None}
            insort(self.keys, -key)
        else:
            level[entry] = None

    def remove(self, entry: E) -> None:
        """Take an entry off the book, dropping its level if it was the last one there."""
        key = entry.key
        level = self.levels[key]
        del level[entry]
        if not level:
            del self.levels[key]
            keys = self.keys
            if keys[-1] == -key:
                keys.pop()
            else:
                del keys[bisect_left(keys, -key)]

    def holds(self, entry: E) -> bool:
        """Whether the entry rests on this side (its key is current while it rests)."""
        level = self.levels.get(entry.key)
        return level is not None and entry in level

    def best_within(self, bound: int) -> bool:
        """Whether the best level's key is at most ``bound``."""
        keys = self.keys
        return bool(keys) and keys[-1] >= -bound

    def best_keys(self) -> Iterator[int]:
        """The level keys, best first."""
        for negated in reversed(self.keys):
            yield -negated

    def entries(self) -> Iterator[E]:
        """Every entry in priority order."""
        levels = self.levels
        for negated in reversed(self.keys):
            yield from levels[-negated]

    def up_to(self, bound: int) -> Iterator[E]:
        """Entries in priority order while their key is at most ``bound``."""
        levels = self.levels
        for negated in reversed(self.keys):
            if -negated > bound:
                return
            yield from levels[-negated]

    def rebuild(self, entries: Iterable[E]) -> None:
        """Replace the contents (after keys changed), keeping price-then-arrival order."""
        self.keys = []
        self.levels = {}
        for entry in sorted(entries, key=_PRIORITY):
            self.append(entry)


def candidates(sides: tuple[BookSide[E], ...], bound: int) -> Iterator[E] | None:
    """Entries of one or more sides in one price-time sequence up to ``bound``; None if none.

    Sides whose best key is already past the bound are left out, so the usual case (at most
    one side can match) walks that side directly instead of merging.
    """
    live: BookSide[E] | None = None
    for side in sides:
        keys = side.keys
        if keys and keys[-1] >= -bound:
            if live is not None:
                return heapq.merge(
                    *(s.up_to(bound) for s in sides if s.best_within(bound)),
                    key=_PRIORITY,
                )
            live = side
    return None if live is None else live.up_to(bound)


class GpuBook:
    """Every side of one GPU model's books, with the side tuples each kind of taker walks.

    ``preemptable`` holds (the primary legs of) the two-leg pools that have sold
    interruptible leases: where an on-demand order may preempt. It may also hold pools
    whose interruptible leases all ended or are being interrupted; a preempting order
    drops those as it meets them.
    """

    __slots__ = ("ask_sides", "asks", "bid_sides", "bids", "preemptable")

    def __init__(self) -> None:
        on_demand: BookSide[OfferEntry] = BookSide()
        interruptible: BookSide[OfferEntry] = BookSide()
        self.asks: dict[str, BookSide[OfferEntry]] = {
            Tier.ON_DEMAND: on_demand,
            Tier.INTERRUPTIBLE: interruptible,
        }
        bids_on_demand: BookSide[BidEntry] = BookSide()
        bids_interruptible: BookSide[BidEntry] = BookSide()
        bids_any: BookSide[BidEntry] = BookSide()
        self.bids: dict[str, BookSide[BidEntry]] = {
            Tier.ON_DEMAND: bids_on_demand,
            Tier.INTERRUPTIBLE: bids_interruptible,
            Tier.ANY: bids_any,
        }
        # A bid of a tier takes these asks; an offer of a tier meets these bids.
        self.ask_sides: dict[str, tuple[BookSide[OfferEntry], ...]] = {
            Tier.ON_DEMAND: (on_demand,),
            Tier.INTERRUPTIBLE: (interruptible,),
            Tier.ANY: (on_demand, interruptible),
        }
        self.bid_sides: dict[str, tuple[BookSide[BidEntry], ...]] = {
            Tier.ON_DEMAND: (bids_on_demand, bids_any),
            Tier.INTERRUPTIBLE: (bids_interruptible, bids_any),
        }
        self.preemptable: dict[OfferEntry, None] = {}
