"""Best ask and depth per GPU model and tier (and per region), from the live offers.

The matching service owns the book; pricing mirrors each offer's remaining GPUs from
the book's events and aggregates them here. Offers in different currencies are ranked
by their value in the reference currency, computed when the offer (or a rate) changes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal

from gpux_contracts.money import Currency
from gpux_contracts.prices import ALL_REGIONS

ANY_REGION = ALL_REGIONS


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
        return f"{self.gpu}|{self.tier}|{self.region}"


class Market:
    """The live offers of every GPU model, with quotes computed on demand."""

    def __init__(self, depth_levels: int = 20) -> None:
        self._offers: dict[str, LiveOffer] = {}
        self._depth_levels = depth_levels

    def __len__(self) -> int:
        return len(self._offers)

    def get(self, offer_id: str) -> LiveOffer | None:
        """One live offer."""
        return self._offers.get(offer_id)

    def offers(self) -> Iterable[LiveOffer]:
        """Every live offer."""
        return self._offers.values()

    def upsert(self, offer: LiveOffer) -> set[tuple[str, str]]:
        """Add or replace an offer (removed when nothing remains); returns the books touched."""
        touched = {(offer.gpu, offer.tier)}
        old = self._offers.pop(offer.offer_id, None)
        if old is not None:
            touched.add((old.gpu, old.tier))
        if offer.remaining > 0:
            self._offers[offer.offer_id] = offer
        return touched

    def remove(self, offer_id: str) -> set[tuple[str, str]]:
        """Take an offer off; returns the books touched."""
        old = self._offers.pop(offer_id, None)
        return {(old.gpu, old.tier)} if old is not None else set()

    def set_remaining(self, offer_id: str, remaining: int) -> set[tuple[str, str]]:
        """Change how many GPUs an offer still has."""
        old = self._offers.get(offer_id)
        if old is None:
            return set()
        return self.upsert(replace(old, remaining=remaining))

    def quotes(self, gpu: str, tier: str) -> list[Quote]:
        """The quote of one book for every region plus the all-regions quote."""
        offers = [o for o in self._offers.values() if o.gpu == gpu and o.tier == tier]
        by_region: dict[str, list[LiveOffer]] = defaultdict(list)
        for offer in offers:
            by_region[offer.region or ANY_REGION].append(offer)
        quotes = [self._quote(gpu, tier, ANY_REGION, offers)]
        for region, regional in sorted(by_region.items()):
            if region != ANY_REGION:
                quotes.append(self._quote(gpu, tier, region, regional))
        return quotes

    def _quote(self, gpu: str, tier: str, region: str, offers: list[LiveOffer]) -> Quote:
        levels: dict[int, int] = defaultdict(int)
        for offer in offers:
            levels[offer.reference_micros] += offer.remaining
        depth = tuple(Level(p, levels[p]) for p in sorted(levels)[: self._depth_levels])
        if not offers:
            return Quote(gpu, tier, region, None, 0, ())
        # Cheapest in reference terms; ties go to the lowest offer id (the oldest ULID).
        best = min(offers, key=lambda o: (o.reference_micros, o.offer_id))
        return Quote(gpu, tier, region, best, depth[0].gpus, depth)
