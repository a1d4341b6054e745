"""An engine's state: books per GPU, indexes by id, level depth, the expiry queue, and the
scratch lists a command fills; plus queries, snapshot and restore over that state.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from operator import attrgetter
from typing import Any, Self

from gpux_matching.domain.book import GpuBook
from gpux_matching.domain.entries import BidEntry, OfferEntry
from gpux_matching.domain.levels import BOOK_TIERS, DEPTH, BookLevels, book_levels
from gpux_matching.domain.results import (
    Fill,
    LeaseView,
    Level,
    LevelChange,
    OfferUpdate,
    OrderUpdate,
    PoolView,
    Result,
)
from gpux_matching.domain.snapshot import (
    FORMAT,
    Capture,
    bid_from_plain,
    bid_row,
    bid_to_plain,
    offer_from_plain,
    offer_row,
    offer_to_plain,
)
from gpux_matching.domain.types import OfferStatus, OrderStatus, Reason, Side
from gpux_matching.domain.units import (
    Instant,
    Rate,
    epoch_micros,
    rate_from_plain,
    rate_to_plain,
    rates_from,
    reference_price,
)

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_OFFER_EXHAUSTED = OfferStatus.EXHAUSTED
_OFFER_EXPIRED = OfferStatus.EXPIRED
_OFFER_LIVE = OfferStatus.LIVE
_ORDER_EXPIRED = OrderStatus.EXPIRED
_ORDER_FILLED = OrderStatus.FILLED
_ORDER_OPEN = OrderStatus.OPEN
_ORDER_PARTIALLY_FILLED = OrderStatus.PARTIALLY_FILLED

OFFER, BID = 0, 1
"""Kinds of expiry items; offers first when both expire at the same instant."""

PRIORITY = attrgetter("key", "seq")
_SEQ = attrgetter("seq")

new_tuple = tuple.__new__
"""Builds results on the hot path: ``new_tuple(OrderUpdate, (...))`` skips the NamedTuple's
own ``__new__``, a Python-level function that costs about three times as much."""
_new = new_tuple

Expiry = tuple[int, int, str, int, OfferEntry | BidEntry]
"""(expires at, kind, id, push counter, entry): the counter keeps entries from being compared."""


class EngineState:
    """What a matching engine holds between commands, and how it is kept consistent."""

    __slots__ = (
        "_books",
        "_depth",
        "_expiry",
        "_fills",
        "_offer_out",
        "_offers",
        "_order_out",
        "_orders",
        "_pushes",
        "_rates",
        "_seq",
        "_touched",
    )

    def __init__(self, rates: Mapping[str, Rate] | None = None) -> None:
        parsed = rates_from(rates or {})
        if parsed is None:
            raise ValueError("FX rates must be positive ints or Decimals")
        self._rates: dict[str, Rate] = parsed
        self._books: dict[str, GpuBook] = {}
        self._offers: dict[str, OfferEntry] = {}
        self._orders: dict[str, BidEntry] = {}
        self._depth: dict[Level, int] = {}
        self._expiry: list[Expiry] = []
        self._seq = 0
        self._pushes = 0
        self._fills: list[Fill] = []
        self._order_out: list[OrderUpdate] = []
        self._offer_out: list[OfferUpdate] = []
        self._touched: dict[Level, None] = {}

    # Queries --------------------------------------------------------------------------------

    @property
    def rates(self) -> dict[str, Rate]:
        """The FX rates in force (reference micro-units per unit of each currency)."""
        return dict(self._rates)

    def order(self, order_id: str) -> OrderUpdate | None:
        """A resting order's current state, or None if it is not on the book."""
        bid = self._orders.get(order_id)
        return None if bid is None else order_state(bid)

    def offer(self, offer_id: str) -> OfferUpdate | None:
        """A live offer's current state, or None if it is not on the book."""
        offer = self._offers.get(offer_id)
        return None if offer is None else offer_state(offer)

    def pool(self, offer_id: str) -> PoolView | None:
        """An offer's pool (capacity, leased, free, leases by id), or None if not kept."""
        offer = self._offers.get(offer_id)
        if offer is None:
            return None
        leases: dict[str, LeaseView] = {}
        return PoolView(offer.gpus, offer.sold, offer.remaining, leases, offer.sold)

    def depth(self, gpu: str, tier: str, side: Side) -> list[LevelChange]:
        """Aggregated levels of one book side, best first (bid tiers include ``any``)."""
        book = self._books.get(gpu)
        if book is None:
            return []
        sides = book.asks if side == Side.ASK else book.bids
        book_side = sides.get(tier)
        if book_side is None:
            return []
        levels: dict[Level, None] = {}
        for entry in book_side.entries():
            levels[entry.level] = None
        return [LevelChange(level, self._depth[level]) for level in levels]

    def levels(self, gpu: str, tier: str, depth: int = DEPTH) -> BookLevels:
        """One book's aggregated levels by reference price, both sides, best ``depth`` each."""
        return book_levels(self._books.get(gpu), gpu, tier, depth)

    def books(self) -> list[tuple[str, str]]:
        """Every book (gpu, tier) the engine has seen an order or offer for."""
        return [(gpu, str(tier)) for gpu in self._books for tier in BOOK_TIERS]

    def counts(self) -> tuple[int, int]:
        """(resting orders, live offers)."""
        return len(self._orders), len(self._offers)

    # Snapshot and restore -------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The engine's whole state as plain data (JSON-friendly), for persistence."""
        return {
            "format": FORMAT,
            "seq": self._seq,
            "rates": {c: rate_to_plain(rate) for c, rate in sorted(self._rates.items())},
            "offers": [offer_to_plain(o) for o in sorted(self._offers.values(), key=_SEQ)],
            "orders": [bid_to_plain(b) for b in sorted(self._orders.values(), key=_SEQ)],
        }

    def capture(self) -> Capture:
        """The state as rows of values, copied fast (no dicts, no sorting): a consistent
        point that ``snapshot_from`` turns into the same data as ``snapshot()`` later."""
        return Capture(
            self._seq,
            {c: rate_to_plain(rate) for c, rate in sorted(self._rates.items())},
            list(map(offer_row, self._offers.values())),
            list(map(bid_row, self._orders.values())),
        )

    @classmethod
    def restore(cls, snapshot: Mapping[str, Any]) -> Self:
        """An engine rebuilt from ``snapshot()``'s output; it behaves exactly as the original."""
        if snapshot.get("format") != FORMAT:
            raise ValueError(f"unknown snapshot format: {snapshot.get('format')!r}")
        engine = cls({c: rate_from_plain(v) for c, v in snapshot["rates"].items()})
        rates = engine._rates
        offers = sorted((offer_from_plain(d) for d in snapshot["offers"]), key=_SEQ)
        for offer in offers:
            offer.key = reference_price(offer.price_micros, rates[offer.currency])
            engine._rest_offer(offer, engine._book(offer.gpu))
            if offer.available_until is not None:
                engine._push_expiry(offer.available_until, OFFER, offer.offer_id, offer)
        for bid in sorted((bid_from_plain(d) for d in snapshot["orders"]), key=_SEQ):
            bid.key = -reference_price(bid.price_micros, rates[bid.currency])
            engine._rest_bid(bid, engine._book(bid.gpu))
            if bid.expires_at is not None:
                engine._push_expiry(bid.expires_at, BID, bid.order_id, bid)
        engine._seq = snapshot["seq"]
        engine._touched.clear()
        return engine

    # Book keeping ---------------------------------------------------------------------------

    def _book(self, gpu: str) -> GpuBook:
        book = self._books.get(gpu)
        if book is None:
            book = self._books[gpu] = GpuBook()
        return book

    # The four helpers below return the level's new depth and leave reporting the level to
    # the caller: a quiet command reports it directly, skipping the scratch lists.

    def _rest_bid(self, bid: BidEntry, book: GpuBook) -> int:
        book.bids[bid.tier].append(bid)
        self._orders[bid.order_id] = bid
        level, depth = bid.level, self._depth
        gpus = depth[level] = depth.get(level, 0) + bid.remaining
        return gpus

    def _rest_offer(self, offer: OfferEntry, book: GpuBook) -> int:
        book.asks[offer.tier].append(offer)
        self._offers[offer.offer_id] = offer
        level, depth = offer.level, self._depth
        gpus = depth[level] = depth.get(level, 0) + offer.remaining
        return gpus

    def _unrest_offer(self, offer: OfferEntry) -> int:
        self._books[offer.gpu].asks[offer.tier].remove(offer)
        del self._offers[offer.offer_id]
        return self._shrink(offer.level, offer.remaining)

    def _unrest_bid(self, bid: BidEntry) -> int:
        self._books[bid.gpu].bids[bid.tier].remove(bid)
        del self._orders[bid.order_id]
        return self._shrink(bid.level, bid.remaining)

    def _shrink(self, level: Level, gpus: int) -> int:
        depth = self._depth
        left = depth[level] - gpus
        if left:
            depth[level] = left
        else:
            del depth[level]
        return left

    def _level(self, level: Level, delta: int) -> None:
        depth = self._depth
        total = depth.get(level, 0) + delta
        if total:
            depth[level] = total
        else:
            depth.pop(level, None)
        self._touched[level] = None

    def _push_expiry(self, at: int, kind: int, entry_id: str, entry: OfferEntry | BidEntry) -> None:
        heap = self._expiry
        if len(heap) > 64 + 2 * (len(self._orders) + len(self._offers)):
            # Cancelled and filled entries leave stale items behind; drop them now and then.
            heap[:] = [item for item in heap if self._is_live(item)]
            heapq.heapify(heap)
        self._pushes += 1
        heapq.heappush(heap, (at, kind, entry_id, self._pushes, entry))

    def _is_live(self, item: Expiry) -> bool:
        _, kind, entry_id, _, entry = item
        index: Mapping[str, object] = self._offers if kind == OFFER else self._orders
        return index.get(entry_id) is entry

    def _expire_due(self, t: int) -> None:
        """Take everything whose time is up at ``t`` off the book (earliest first)."""
        heap = self._expiry
        while heap and heap[0][0] <= t:
            item = heapq.heappop(heap)
            if not self._is_live(item):
                continue
            entry = item[4]
            if isinstance(entry, OfferEntry):
                self._unrest_offer(entry)
                self._touched[entry.level] = None
                self._offer_out.append(
                    OfferUpdate(entry.offer_id, _OFFER_EXPIRED, entry.gpus, entry.sold, 0, None)
                )
            else:
                self._unrest_bid(entry)
                self._touched[entry.level] = None
                self._order_out.append(
                    OrderUpdate(
                        entry.order_id,
                        _ORDER_EXPIRED,
                        entry.gpus,
                        entry.filled,
                        0,
                        entry.remaining,
                        None,
                    )
                )

    def _begin(self, now: Instant) -> int:
        """Start a command at ``now``: expire what is due, return ``now`` in epoch micros."""
        t = now if type(now) is int else epoch_micros(now)
        if self._expiry and self._expiry[0][0] <= t:
            self._expire_due(t)
        return t

    def _finish(self, rejection: Reason | None) -> Result:
        """Hand out what the command changed and reset the scratch lists."""
        touched = self._touched
        levels: tuple[LevelChange, ...] = ()
        if touched:
            depth = self._depth
            if len(touched) == 1:
                for lk in touched:
                    levels = (_new(LevelChange, (lk, depth.get(lk, 0))),)
            else:
                levels = tuple([_new(LevelChange, (lk, depth.get(lk, 0))) for lk in touched])
            touched.clear()
        # Most commands leave two of the three lists empty: skip the copies for those.
        fills, orders, offers = self._fills, self._order_out, self._offer_out
        result = _new(
            Result,
            (
                tuple(fills) if fills else (),
                tuple(orders) if orders else (),
                tuple(offers) if offers else (),
                levels,
                rejection,
                (),
            ),
        )
        if fills:
            fills.clear()
        if orders:
            orders.clear()
        if offers:
            offers.clear()
        return result


def offer_state(offer: OfferEntry) -> OfferUpdate:
    """An offer's update as it stands."""
    status = _OFFER_LIVE if offer.remaining else _OFFER_EXHAUSTED
    return _new(
        OfferUpdate, (offer.offer_id, status, offer.gpus, offer.sold, offer.remaining, None)
    )


def order_state(bid: BidEntry) -> OrderUpdate:
    """An order's update as it stands (filled, partially filled or open)."""
    if not bid.remaining:
        status = _ORDER_FILLED
    elif bid.filled:
        status = _ORDER_PARTIALLY_FILLED
    else:
        status = _ORDER_OPEN
    return _new(OrderUpdate, (bid.order_id, status, bid.gpus, bid.filled, bid.remaining, 0, None))
