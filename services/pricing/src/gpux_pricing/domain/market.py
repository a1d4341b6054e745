"""Best ask and depth per GPU model and tier (and per region), kept up to date change by change.

The matching service owns the book; pricing mirrors each offer's free GPUs from the book's
events. An offer is one pool of GPUs sold in one or two tiers: each tier it is sold in is a
**leg**, in that tier's book at that tier's price (``legs_of``), and every leg shows the
pool's free GPUs. An offer with no free GPU (exhausted) or off the market has no leg in any
book; it comes back, in every tier, when the book reports it live with free GPUs again.
Offers in different currencies are ranked by their value in the reference currency,
computed when the offer (or a rate) changes. Each book keeps, for all regions and for each
region it has seen, its price levels in order: a sorted list of prices with the GPUs, the
offer ids and the sellers at each. A change costs two binary searches and a list insert or delete
(O(levels)) per leg; a quote reads the first levels only, never the whole book.
``quotes_from_scratch`` is the plain recomputation the incremental books must always equal.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_contracts.prices import ALL_REGIONS
from gpux_pricing.domain.fx import FxError, RateTable

ANY_REGION = ALL_REGIONS
DEPTH_LEVELS = 20
"""Price levels a quote shows."""

BookKey = tuple[str, str]
"""A book: (GPU model, tier)."""


@dataclass(frozen=True, slots=True)
class LiveOffer:
    """One leg of an offer on the book as pricing sees it: its seller, its tier, its price in
    that tier, and the offer's free GPUs (``remaining``)."""

    offer_id: str
    seller_id: str
    gpu: str
    tier: str
    region: str | None
    price: Decimal
    currency: Currency
    remaining: int
    reference_micros: int


@dataclass(frozen=True, slots=True)
class Level:
    """GPUs offered at one price (reference micro-units per GPU-hour), and by whom: the
    distinct sellers of the offers at this price (their reliability is shown per level)."""

    reference_micros: int
    gpus: int
    sellers: frozenset[str]


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


def legs_of(offer: OfferSubmitted) -> tuple[tuple[str, Decimal], ...]:
    """The tiers an offer is sold in, each with its price per GPU-hour, on demand first.

    An on-demand offer is sold on demand at its price and, when it has an interruptible
    price, as interruptible at that price too; an interruptible offer only as interruptible,
    at its price (an interruptible price on it is refused by validation and never read here).
    """
    if offer.tier is not Tier.ON_DEMAND:
        return ((offer.tier.value, offer.price_per_gpu_hour),)
    legs = [(Tier.ON_DEMAND.value, offer.price_per_gpu_hour)]
    if offer.interruptible_price_per_gpu_hour is not None:
        legs.append((Tier.INTERRUPTIBLE.value, offer.interruptible_price_per_gpu_hour))
    return tuple(legs)


def tiers_of(offer: OfferSubmitted) -> tuple[str, ...]:
    """The books (tiers) an offer is sold in, on demand first."""
    return tuple(tier for tier, _ in legs_of(offer))


def free_on_book(status: OfferStatus, remaining: int) -> int:
    """The GPUs the book says an offer has for sale now: its free GPUs while it is live, none
    otherwise (exhausted, withdrawn, expired).

    Exhausted is not final: a later ``live`` with free GPUs (a lease gave them back) puts the
    offer in its books again."""
    return remaining if status is OfferStatus.LIVE and remaining > 0 else 0


def live_leg(
    offer: OfferSubmitted, tier: str, free: int, rates: RateTable, now: datetime
) -> LiveOffer | None:
    """The offer's leg in ``tier``'s book as the market ranks it, showing ``free`` GPUs; None
    when it is not sold in that tier or no rate can rank its currency."""
    price = dict(legs_of(offer)).get(tier)
    if price is None:
        return None
    try:
        reference = rates.reference_micros(price, offer.currency, now)
    except FxError:
        return None  # it was checked when accepted; without a rate it cannot be ranked
    return LiveOffer(
        offer.offer_id,
        offer.seller_id,
        offer.gpu,
        tier,
        offer.region,
        price,
        offer.currency,
        free,
        reference,
    )


def live_legs(offer: OfferSubmitted, free: int, rates: RateTable, now: datetime) -> list[LiveOffer]:
    """Every leg of the offer as the market ranks it, each showing ``free`` GPUs (none when
    no rate can rank its currency)."""
    legs = (live_leg(offer, tier, free, rates, now) for tier in tiers_of(offer))
    return [leg for leg in legs if leg is not None]


def _region_of(offer: LiveOffer) -> str:
    return offer.region or ANY_REGION


class _Ladder:
    """The price levels of one region (or of every region) of a book, cheapest first."""

    __slots__ = ("_gpus", "_ids", "_prices", "_sellers")

    def __init__(self) -> None:
        self._prices: list[int] = []
        self._gpus: dict[int, int] = {}
        self._ids: dict[int, list[str]] = {}
        self._sellers: dict[int, Counter[str]] = {}
        """Per price, each seller's offers at it (a seller stays while one of them does)."""

    def add(self, offer: LiveOffer) -> None:
        price = offer.reference_micros
        ids = self._ids.get(price)
        if ids is None:
            insort(self._prices, price)
            ids = self._ids[price] = []
            self._gpus[price] = 0
            self._sellers[price] = Counter()
        insort(ids, offer.offer_id)
        self._gpus[price] += offer.remaining
        self._sellers[price][offer.seller_id] += 1

    def discard(self, offer: LiveOffer) -> None:
        price = offer.reference_micros
        ids = self._ids[price]
        del ids[bisect_left(ids, offer.offer_id)]
        self._gpus[price] -= offer.remaining
        sellers = self._sellers[price]
        sellers[offer.seller_id] -= 1
        if not sellers[offer.seller_id]:
            del sellers[offer.seller_id]
        if not ids:
            del self._ids[price], self._gpus[price], self._sellers[price]
            del self._prices[bisect_left(self._prices, price)]

    def best_id(self) -> str | None:
        """The cheapest offer; ties go to the lowest offer id (the oldest ULID)."""
        return self._ids[self._prices[0]][0] if self._prices else None

    def depth(self, levels: int) -> tuple[Level, ...]:
        return tuple(
            Level(p, self._gpus[p], frozenset(self._sellers[p])) for p in self._prices[:levels]
        )


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
    """The live offers of every GPU model, book by book; an offer has a leg in each book of a
    tier it is sold in."""

    def __init__(self, depth_levels: int = DEPTH_LEVELS) -> None:
        self._depth_levels = depth_levels
        self._books: dict[BookKey, Book] = {}
        self._where: dict[str, set[BookKey]] = {}

    def __len__(self) -> int:
        """The offers with at least one leg in a book."""
        return len(self._where)

    def __contains__(self, key: BookKey) -> bool:
        return key in self._books

    def legs(self, offer_id: str) -> tuple[LiveOffer, ...]:
        """The legs of one live offer, by book key (none when it is in no book)."""
        keys = sorted(self._where.get(offer_id, ()))
        return tuple(leg for key in keys if (leg := self._books[key].get(offer_id)) is not None)

    def offers(self) -> Iterator[LiveOffer]:
        """Every leg of every live offer."""
        for book in self._books.values():
            yield from book.offers()

    def book(self, gpu: str, tier: str) -> Book:
        """One book (an empty one the first time it is asked for)."""
        key = (gpu, tier)
        found = self._books.get(key)
        if found is None:
            found = self._books[key] = Book(gpu, tier, self._depth_levels)
        return found

    def place(self, offer_id: str, legs: Iterable[LiveOffer]) -> set[BookKey]:
        """Put an offer in exactly these legs' books (a leg with nothing free stays off) and
        take it off every other; returns the books touched."""
        touched = self.remove(offer_id)
        for leg in legs:
            if leg.offer_id != offer_id:
                raise ValueError(f"a leg of {leg.offer_id} placed as {offer_id}")
            touched.add(self._put(leg))
        return touched

    def upsert(self, offer: LiveOffer) -> set[BookKey]:
        """Put an offer in one book only (removed when nothing remains); returns the books
        touched."""
        return self.place(offer.offer_id, [offer])

    def remove(self, offer_id: str) -> set[BookKey]:
        """Take every leg of an offer off; returns the books touched."""
        keys = self._where.pop(offer_id, set())
        for key in keys:
            self._books[key].take(offer_id)
        return keys

    def set_remaining(self, offer_id: str, remaining: int) -> set[BookKey]:
        """Change how many GPUs an offer has free, in every book it is in."""
        legs = self.legs(offer_id)
        if not legs:
            return set()
        return self.place(offer_id, [replace(leg, remaining=remaining) for leg in legs])

    def quotes(self, gpu: str, tier: str) -> list[Quote]:
        """The quote of one book for all regions, then for each region it has held offers in."""
        found = self._books.get((gpu, tier))
        return Book(gpu, tier).quotes() if found is None else found.quotes()

    def load(self, gpu: str, tier: str, offers: Iterable[LiveOffer]) -> Book:
        """Replace one book with these legs (as a store holds them); other books stay."""
        self.drop(gpu, tier)
        book = self.book(gpu, tier)
        for offer in offers:
            if (offer.gpu, offer.tier) != (gpu, tier):
                raise ValueError(f"a leg of {offer.gpu}/{offer.tier} loaded into {gpu}/{tier}")
            self._put(offer)
        return book

    def drop(self, gpu: str, tier: str) -> None:
        """Forget one book."""
        key = (gpu, tier)
        book = self._books.pop(key, None)
        if book is None:
            return
        for offer in book.offers():
            keys = self._where.get(offer.offer_id)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._where[offer.offer_id]

    def clear(self) -> None:
        """Forget every book."""
        self._books.clear()
        self._where.clear()

    def _put(self, leg: LiveOffer) -> BookKey:
        key = (leg.gpu, leg.tier)
        book = self.book(*key)
        book.put(leg)
        keys = self._where.setdefault(leg.offer_id, set())
        if book.get(leg.offer_id) is not None:
            keys.add(key)
        else:
            keys.discard(key)
            if not keys:
                del self._where[leg.offer_id]
        return key


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
    sellers: dict[int, set[str]] = defaultdict(set)
    for offer in offers:
        levels[offer.reference_micros] += offer.remaining
        sellers[offer.reference_micros].add(offer.seller_id)
    depth = tuple(Level(p, levels[p], frozenset(sellers[p])) for p in sorted(levels)[:depth_levels])
    best = min(offers, key=lambda o: (o.reference_micros, o.offer_id))
    return Quote(gpu, tier, region, best, depth[0].gpus, depth)
