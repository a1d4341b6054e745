"""An engine's state: books per GPU, indexes by id, level depth, the expiry queue, and the
scratch lists a command fills; plus queries, snapshot and restore over that state.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from operator import attrgetter
from typing import Any, Self

from gpux_matching.domain.book import GpuBook
from gpux_matching.domain.entries import BidEntry, OfferEntry, PoolExtra
from gpux_matching.domain.levels import BOOK_TIERS, DEPTH, BookLevels, book_levels
from gpux_matching.domain.results import (
    Fill,
    Interruption,
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
    FORMAT_BEFORE_CAPACITY,
    Capture,
    bid_from_plain,
    bid_row,
    bid_to_plain,
    offer_from_plain,
    offer_row,
    offer_to_plain,
)
from gpux_matching.domain.types import OfferStatus, OrderStatus, Reason, Side, Tier
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
_INTERRUPTIBLE = str(Tier.INTERRUPTIBLE)  # a plain str: compares fastest

OFFER, BID = 0, 1
"""Kinds of expiry items; offers first when both expire at the same instant."""

PRIORITY = attrgetter("key", "seq")
_SEQ = attrgetter("seq")

new_tuple = tuple.__new__
"""Builds results on the hot path: ``new_tuple(OrderUpdate, (...))`` skips the NamedTuple's
own ``__new__``, a Python-level function that costs about three times as much."""
_new = new_tuple

_EMPTY = PoolExtra()
"""The rare state of a pool that has none (read only)."""

Expiry = tuple[int, int, str, int, OfferEntry | BidEntry]
"""(expires at, kind, id, push counter, entry): the counter keeps entries from being compared."""


class EngineState:
    """What a matching engine holds between commands, and how it is kept consistent."""

    __slots__ = (
        "_books",
        "_depth",
        "_expiry",
        "_fills",
        "_interruptions",
        "_levels",
        "_merge",
        "_offer_out",
        "_offers",
        "_order_out",
        "_orders",
        "_pushes",
        "_rates",
        "_reliability",
        "_reliability_totals",
        "_seq",
        "_touched",
    )

    def __init__(self, rates: Mapping[str, Rate] | None = None) -> None:
        parsed = rates_from(rates or {})
        if parsed is None:
            raise ValueError("FX rates must be positive ints or Decimals")
        self._rates: dict[str, Rate] = parsed
        self._reliability: dict[str, int] = {}
        """Each rated seller's rate in basis points (``set_seller_reliability``)."""
        self._reliability_totals: dict[str, int] = {}
        """The total each seller's rate was counted over (absent: 0, none given)."""
        self._books: dict[str, GpuBook] = {}
        self._offers: dict[str, OfferEntry] = {}
        self._orders: dict[str, BidEntry] = {}
        self._depth: dict[Level, int] = {}
        self._levels: dict[Level, Level] = {}
        """One instance of each level entries rest at (``_canonical``)."""
        self._expiry: list[Expiry] = []
        self._seq = 0
        self._pushes = 0
        self._fills: list[Fill] = []
        self._order_out: list[OrderUpdate] = []
        self._offer_out: list[OfferUpdate] = []
        self._interruptions: list[Interruption] = []
        self._merge = False
        """Set by a command that may have reported an offer twice: keep its last update."""
        self._touched: dict[Level, None] = {}

    # Queries --------------------------------------------------------------------------------

    @property
    def rates(self) -> dict[str, Rate]:
        """The FX rates in force (reference micro-units per unit of each currency)."""
        return dict(self._rates)

    @property
    def reliability(self) -> dict[str, int]:
        """Each rated seller's reliability rate in basis points (absent: unrated)."""
        return dict(self._reliability)

    @property
    def reliability_totals(self) -> dict[str, int]:
        """The total of leases each seller's rate was counted over (absent: 0, none given)."""
        return dict(self._reliability_totals)

    def holds_minimums(self) -> bool:
        """Whether any resting bid has a minimum reliability (a linear scan: for the rare
        moments a caller must know, not for every command)."""
        return any(bid.min_reliability_bp is not None for bid in self._orders.values())

    def order(self, order_id: str) -> OrderUpdate | None:
        """A resting order's current state, or None if it is not on the book."""
        bid = self._orders.get(order_id)
        return None if bid is None else order_state(bid)

    def offer(self, offer_id: str) -> OfferUpdate | None:
        """An offer's current state (live or exhausted), or None if the book does not keep
        it (never did, or it was withdrawn or expired)."""
        offer = self._offers.get(offer_id)
        return None if offer is None else offer_state(offer)

    def pool(self, offer_id: str) -> PoolView | None:
        """An offer's pool (capacity, leased, free, leases by id), or None if not kept."""
        offer = self._offers.get(offer_id)
        if offer is None:
            return None
        extra = offer.extra or _EMPTY
        notices, claims = extra.notices, extra.claims
        leases = {}
        for lease_id, (gpus, tier, _) in offer.leases.items():
            notice = notices.get(lease_id)
            leases[lease_id] = LeaseView(
                gpus,
                str(tier),
                None if notice is None else notice.interrupt_at,
                claims.get(lease_id),
            )
        return PoolView(offer.gpus, offer.sold, offer.remaining, leases, extra.legacy)

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
        """(resting orders, live offers: those with free GPUs on the book). Exhausted offers
        are kept too (``offer``, ``pool``) but not counted here."""
        return len(self._orders), sum(1 for offer in self._offers.values() if offer.remaining)

    # Snapshot and restore -------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The engine's whole state as plain data (JSON-friendly), for persistence."""
        return {
            "format": FORMAT,
            "seq": self._seq,
            "rates": {c: rate_to_plain(rate) for c, rate in sorted(self._rates.items())},
            "reliability": dict(sorted(self._reliability.items())),
            "reliability_totals": dict(sorted(self._reliability_totals.items())),
            "offers": [offer_to_plain(o) for o in sorted(self._offers.values(), key=_SEQ)],
            "orders": [bid_to_plain(b) for b in sorted(self._orders.values(), key=_SEQ)],
        }

    def capture(self) -> Capture:
        """The state as rows of values, copied fast (no dicts, no sorting): a consistent
        point that ``snapshot_from`` turns into the same data as ``snapshot()`` later."""
        return Capture(
            self._seq,
            {c: rate_to_plain(rate) for c, rate in sorted(self._rates.items())},
            dict(sorted(self._reliability.items())),
            dict(sorted(self._reliability_totals.items())),
            list(map(offer_row, self._offers.values())),
            list(map(bid_row, self._orders.values())),
        )

    @classmethod
    def restore(cls, snapshot: Mapping[str, Any]) -> Self:
        """An engine rebuilt from ``snapshot()``'s output; it behaves exactly as the original.

        A snapshot of format 1 (before capacity) restores as pools: capacity = the offer's
        GPUs, what it had sold counted as legacy leased, in its own tier at its price.
        """
        kind = snapshot.get("format")
        if kind not in {FORMAT, FORMAT_BEFORE_CAPACITY}:
            raise ValueError(f"unknown snapshot format: {kind!r}")
        engine = cls({c: rate_from_plain(v) for c, v in snapshot["rates"].items()})
        engine._reliability.update(snapshot.get("reliability", {}))  # absent: none known yet
        engine._reliability_totals.update(snapshot.get("reliability_totals", {}))  # absent: 0
        engine._restore_offers(snapshot["offers"], legacy=kind == FORMAT_BEFORE_CAPACITY)
        rates = engine._rates
        for bid in sorted((bid_from_plain(d) for d in snapshot["orders"]), key=_SEQ):
            bid.key = -reference_price(bid.price_micros, rates[bid.currency])
            bid.level = engine._canonical(bid.level)
            engine._rest_bid(bid, engine._book(bid.gpu))
            if bid.expires_at is not None:
                engine._push_expiry(bid.expires_at, BID, bid.order_id, bid)
        engine._seq = snapshot["seq"]
        engine._touched.clear()
        return engine

    def _restore_offers(self, offers: list[Any], *, legacy: bool) -> None:
        """Restore's part for offers: each pool kept, its legs with free GPUs on the book in
        their time order, pools that sold interruptible leases where preemption looks."""
        legs = []
        for data in offers:
            offer = offer_from_plain(data, legacy=legacy)
            self._offers[offer.offer_id] = offer
            book = self._book(offer.gpu)
            if offer.available_until is not None:
                self._push_expiry(offer.available_until, OFFER, offer.offer_id, offer)
            for leg in (offer, offer.twin):
                if leg is not None:
                    leg.level = self._canonical(leg.level)
                    if leg.remaining:
                        legs.append(leg)
            if offer.twin is not None and any(
                tier == _INTERRUPTIBLE for _, tier, _ in offer.leases.values()
            ):
                book.preemptable[offer] = None
        rates = self._rates
        for leg in sorted(legs, key=_SEQ):
            leg.key = reference_price(leg.price_micros, rates[leg.currency])
            self._rest_leg(leg, self._books[leg.gpu])

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

    def _rest_leg(self, leg: OfferEntry, book: GpuBook) -> int:
        """Put a leg with free GPUs on its book, behind everything at its price."""
        book.asks[leg.tier].append(leg)
        level, depth = leg.level, self._depth
        gpus = depth[level] = depth.get(level, 0) + leg.remaining
        return gpus

    def _unrest_leg(self, leg: OfferEntry) -> int:
        """Take a resting leg off its book."""
        self._books[leg.gpu].asks[leg.tier].remove(leg)
        return self._shrink(leg.level, leg.remaining)

    def _unrest_offer(self, offer: OfferEntry) -> int:
        """Forget an offer's pool (withdrawn, expired): its legs leave the book (the twin's
        level is reported; the primary's is the caller's) and later releases of its leases
        change nothing. Returns the primary leg's level depth after."""
        del self._offers[offer.offer_id]
        twin = offer.twin
        if twin is not None:
            self._books[offer.gpu].preemptable.pop(offer, None)
            if twin.remaining:
                self._unrest_leg(twin)
                self._touched[twin.level] = None
        if offer.remaining:
            return self._unrest_leg(offer)
        return self._depth.get(offer.level, 0)

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

    def _canonical(self, level: Level) -> Level:
        """The one instance of ``level`` the engine keeps. Entries at one price share it, so
        a big book holds a level tuple per price, not one per entry: fewer objects for the
        garbage collector to walk (offers stay while exhausted). Only an optimisation:
        levels compare by value everywhere."""
        levels = self._levels
        found = levels.get(level)
        if found is not None:
            return found
        if len(levels) > 2 * len(self._depth) + 1024:
            # Prices no longer on the book pile up: forget them now and then.
            levels.clear()
            levels.update((known, known) for known in self._depth)
        levels[level] = level
        return level

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
                if entry.remaining:
                    self._touched[entry.level] = None
                self._unrest_offer(entry)
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
        if self._merge:
            self._merge = False
            offers[:] = last_of_each(offers)
        cuts = self._interruptions
        result = _new(
            Result,
            (
                tuple(fills) if fills else (),
                tuple(orders) if orders else (),
                tuple(offers) if offers else (),
                levels,
                rejection,
                tuple(cuts) if cuts else (),
            ),
        )
        if fills:
            fills.clear()
        if orders:
            orders.clear()
        if offers:
            offers.clear()
        if cuts:
            cuts.clear()
        return result


def last_of_each(updates: list[OfferUpdate]) -> list[OfferUpdate]:
    """Each offer's last update, in the order of those last updates."""
    last: dict[str, OfferUpdate] = {}
    for update in updates:
        last.pop(update.offer_id, None)
        last[update.offer_id] = update
    return list(last.values())


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
