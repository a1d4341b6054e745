"""Best ask and depth per GPU model and tier (and per region), kept up to date change by change.

The matching service owns the book; pricing mirrors each offer's remaining GPUs from the
book's events. Offers in different currencies are ranked by their value in the reference
currency, computed when the offer (or a rate) changes. Each book keeps, for all regions and
for each region it has seen, its price levels in order: a sorted list of prices with the GPUs
and the offer ids at each. A change costs two binary searches and a list insert or delete
(O(levels)); a quote reads the first levels only, never the whole book.
``quotes_from_scratch`` is the plain recomputation the incremental books must always equal.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferSubmitted
from gpux_contracts.prices import ALL_REGIONS
from gpux_pricing.domain.fx import FxError, RateTable

ANY_REGION = ALL_REGIONS
DEPTH_LEVELS = 20
"""Price levels a quote shows."""

BookKey = tuple[str, str]
"""A book: (GPU model, tier)."""


@dataclass(frozen=True, slots=True)
class LiveOffer:
    """An offer on the book as pricing sees it."""

    offer_id: str
    gpu: str
    tier: str
    region: str | None
    price: Decimal
    currency: Currency
    remaining: int
    reference_micros: int


@dataclass(frozen=True, slots=True)
class Level:
    """GPUs offered at one price (reference micro-units per GPU-hour)."""

    reference_micros: int
    gpus: int


@dataclass(frozen=True, slots=True)
class Quote:
    """The market for one GPU model, tier and region (``*`` = every region)."""

    gpu: str
    tier: str
    region: str
    best: LiveOffer | None
    gpus_at_best: int
    depth: tuple[Level, ...]

    @property
    def key(self) -> str:
        """The compacted-topic key of this quote."""
        return quote_key(self.gpu, self.tier, self.region)


def quote_key(gpu: str, tier: str, region: str) -> str:
    """The compacted-topic and Redis hash key of a quote: ``gpu|tier|region``."""
    return f"{gpu}|{tier}|{region}"


def live_offer(
    offer: OfferSubmitted, remaining: int, rates: RateTable, now: datetime
) -> LiveOffer | None:
    """An offer as the market ranks it, or None when no rate can rank its currency."""
    try:
        reference = rates.reference_micros(offer.price_per_gpu_hour, offer.currency, now)
    except FxError:
        return None  # it was checked when accepted; without a rate it cannot be ranked
    return LiveOffer(
        offer.offer_id,
        offer.gpu,
        offer.tier.value,
        offer.region,
        offer.price_per_gpu_hour,
        offer.currency,
        remaining,
        reference,
    )


def _region_of(offer: LiveOffer) -> str:
    return offer.region or ANY_REGION


class _Ladder:
    """The price levels of one region (or of every region) of a book, cheapest first."""

    __slots__ = ("_gpus", "_ids", "_prices")

    def __init__(self) -> None:
        self._prices: list[int] = []
        self._gpus: dict[int, int] = {}
        self._ids: dict[int, list[str]] = {}

    def add(self, offer: LiveOffer) -> None:
        price = offer.reference_micros
        ids = self._ids.get(price)
        if ids is None:
            insort(self._prices, price)
            ids = self._ids[price] = []
            self._gpus[price] = 0
        insort(ids, offer.offer_id)
        self._gpus[price] += offer.remaining

    def discard(self, offer: LiveOffer) -> None:
        price = offer.reference_micros
        ids = self._ids[price]
        del ids[bisect_left(ids, offer.offer_id)]
        self._gpus[price] -= offer.remaining
        if not ids:
            del self._ids[price], self._gpus[price]
            del self._prices[bisect_left(self._prices, price)]

    def best_id(self) -> str | None:
        """The cheapest offer; ties go to the lowest offer id (the oldest ULID)."""
        return self._ids[self._prices[0]][0] if self._prices else None

    def depth(self, levels: int) -> tuple[Level, ...]:
        return tuple(Level(p, self._gpus[p]) for p in self._prices[:levels])


class Book:
    """The live offers of one GPU model and tier, with their levels kept in order."""

    def __init__(self, gpu: str, tier: str, depth_levels: int = DEPTH_LEVELS) -> None:
        self.gpu = gpu
        self.tier = tier
        self._depth_levels = depth_levels
        self._offers: dict[str, LiveOffer] = {}
        self._ladders: dict[str, _Ladder] = {ANY_REGION: _Ladder()}

    def __len__(self) -> int:
        return len(self._offers)

    def get(self, offer_id: str) -> LiveOffer | None:
        """One live offer."""
        return self._offers.get(offer_id)

    def offers(self) -> Iterable[LiveOffer]:
        """Every live offer of the book."""
        return self._offers.values()

    def put(self, offer: LiveOffer) -> None:
        """Add or replace an offer of this book (taken off when nothing remains)."""
        self.take(offer.offer_id)
        if offer.remaining <= 0:
            return
        self._offers[offer.offer_id] = offer
        self._ladders[ANY_REGION].add(offer)
        region = _region_of(offer)
        if region != ANY_REGION:
            self._ladders.setdefault(region, _Ladder()).add(offer)

    def take(self, offer_id: str) -> LiveOffer | None:
        """Take an offer off; returns it, or None if it was not on."""
        old = self._offers.pop(offer_id, None)
        if old is not None:
            self._ladders[ANY_REGION].discard(old)
            region = _region_of(old)
            if region != ANY_REGION:
                self._ladders[region].discard(old)
        return old

    def quote(self, region: str) -> Quote:
        """The quote of one region (``*``: all regions)."""
        ladder = self._ladders.get(region)
        best_id = None if ladder is None else ladder.best_id()
        if ladder is None or best_id is None:
            return Quote(self.gpu, self.tier, region, None, 0, ())
        depth = ladder.depth(self._depth_levels)
        return Quote(self.gpu, self.tier, region, self._offers[best_id], depth[0].gpus, depth)

    def quotes(self) -> list[Quote]:
        """The all-regions quote, then one per region the book has held offers in (by name).

        A region whose last offer left keeps its (empty) quote, so that its emptiness is
        published too instead of its last best ask staying on forever.
        """
        regions = sorted(r for r in self._ladders if r != ANY_REGION)
        return [self.quote(ANY_REGION), *(self.quote(r) for r in regions)]


class Market:
    """The live offers of every GPU model, book by book."""

    def __init__(self, depth_levels: int = DEPTH_LEVELS) -> None:
        self._depth_levels = depth_levels
        self._books: dict[BookKey, Book] = {}
        self._where: dict[str, BookKey] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: BookKey) -> bool:
        return key in self._books

    def get(self, offer_id: str) -> LiveOffer | None:
        """One live offer."""
        key = self._where.get(offer_id)
        return None if key is None else self._books[key].get(offer_id)

    def offers(self) -> Iterator[LiveOffer]:
        """Every live offer."""
        for book in self._books.values():
            yield from book.offers()

    def book(self, gpu: str, tier: str) -> Book:
        """One book (an empty one the first time it is asked for)."""
        key = (gpu, tier)
        found = self._books.get(key)
        if found is None:
            found = self._books[key] = Book(gpu, tier, self._depth_levels)
        return found

    def upsert(self, offer: LiveOffer) -> set[BookKey]:
        """Add or replace an offer (removed when nothing remains); returns the books touched."""
        touched = self.remove(offer.offer_id)
        key = (offer.gpu, offer.tier)
        touched.add(key)
        self.book(*key).put(offer)
        if offer.remaining > 0:
            self._where[offer.offer_id] = key
        return touched

    def remove(self, offer_id: str) -> set[BookKey]:
        """Take an offer off; returns the books touched."""
        key = self._where.pop(offer_id, None)
        if key is None:
            return set()
        self._books[key].take(offer_id)
        return {key}

    def set_remaining(self, offer_id: str, remaining: int) -> set[BookKey]:
        """Change how many GPUs an offer still has."""
        old = self.get(offer_id)
        if old is None:
            return set()
        return self.upsert(replace(old, remaining=remaining))

    def quotes(self, gpu: str, tier: str) -> list[Quote]:
        """The quote of one book for all regions, then for each region it has held offers in."""
        found = self._books.get((gpu, tier))
        return Book(gpu, tier).quotes() if found is None else found.quotes()

    def load(self, gpu: str, tier: str, offers: Iterable[LiveOffer]) -> Book:
        """Replace one book with these offers (as a store holds them)."""
        self.drop(gpu, tier)
        book = self.book(gpu, tier)
        for offer in offers:
            self.upsert(offer)
        return book

    def drop(self, gpu: str, tier: str) -> None:
        """Forget one book."""
        book = self._books.pop((gpu, tier), None)
        if book is not None:
            for offer in book.offers():
                self._where.pop(offer.offer_id, None)

    def clear(self) -> None:
        """Forget every book."""
        self._books.clear()
        self._where.clear()


def quotes_from_scratch(
    offers: Iterable[LiveOffer],
    gpu: str,
    tier: str,
    depth_levels: int = DEPTH_LEVELS,
) -> list[Quote]:
    """The quotes of one book computed from its offers by a linear scan (the reference model).

    Regions come in name order, only those with offers: an incremental book also quotes the
    regions it held offers in before, with nothing in them.
    """
    mine = [o for o in offers if o.gpu == gpu and o.tier == tier and o.remaining > 0]
    by_region: dict[str, list[LiveOffer]] = defaultdict(list)
    for offer in mine:
        by_region[_region_of(offer)].append(offer)
    quotes = [_scan(gpu, tier, ANY_REGION, mine, depth_levels)]
    for region, regional in sorted(by_region.items()):
        if region != ANY_REGION:
            quotes.append(_scan(gpu, tier, region, regional, depth_levels))
    return quotes


def _scan(gpu: str, tier: str, region: str, offers: list[LiveOffer], depth_levels: int) -> Quote:
    if not offers:
        return Quote(gpu, tier, region, None, 0, ())
    levels: dict[int, int] = defaultdict(int)
    for offer in offers:
        levels[offer.reference_micros] += offer.remaining
    depth = tuple(Level(p, levels[p]) for p in sorted(levels)[:depth_levels])
    best = min(offers, key=lambda o: (o.reference_micros, o.offer_id))
    return Quote(gpu, tier, region, best, depth[0].gpus, depth)
