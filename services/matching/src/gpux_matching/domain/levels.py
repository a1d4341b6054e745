"""Aggregated price levels of one book (GPU model × tier), both sides, best first.

A book's asks are the live offers of its tier; its bids are the resting bids of its tier plus
those for ``any`` tier (they take either tier's offers, so a seller of either tier meets
them). Levels group entries by reference price (their book key, 10^-12 reference units)
rounded half-even to a whole reference micro-unit, the one money rounding rule: two prices
that differ by less than a micro-unit of the reference currency share a level. Rounding is
monotone, so a book that is not crossed in keys shows a best bid at or below its best ask.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any, NamedTuple

from gpux_contracts.offers import Tier as OfferTier
from gpux_matching.domain.book import BookSide, GpuBook
from gpux_matching.domain.results import LevelChange
from gpux_matching.domain.types import Tier

DEPTH = 20
"""Levels per side a book's view shows by default (best first)."""

BOOK_TIERS = tuple(OfferTier)
"""The tiers a book is kept for (bids for ``any`` show in both)."""

_KEY_SCALE = 1_000_000
"""Book keys are in 10^-12 reference units: this many per reference micro-unit."""


class BookLevel(NamedTuple):
    """GPUs resting at one reference price on one side of a book."""

    price_micros: int
    """Per GPU-hour in reference-currency micro-units (rounded half-even)."""
    gpus: int
    entries: int
    """Resting bids or live offers at this price."""


class BookLevels(NamedTuple):
    """Both sides of one book: bids highest first, asks lowest first."""

    gpu: str
    tier: str
    bids: tuple[BookLevel, ...]
    asks: tuple[BookLevel, ...]


def reference_micros(key: int) -> int:
    """A book key (10^-12 reference units, >= 0) as whole reference micro-units, half-even."""
    whole, rest = divmod(key, _KEY_SCALE)
    twice = 2 * rest
    if twice > _KEY_SCALE or (twice == _KEY_SCALE and whole % 2):
        whole += 1
    return whole


def side_levels(sides: Iterable[BookSide[Any]], sign: int, depth: int) -> tuple[BookLevel, ...]:
    """The best ``depth`` levels of one or more book sides merged (``sign``: -1 for bids,
    whose keys are minus their reference limit)."""
    out: list[BookLevel] = []
    live = [side for side in sides if side.keys]
    keys: Iterable[int] = (
        live[0].best_keys() if len(live) == 1 else heapq.merge(*(s.best_keys() for s in live))
    )
    price = gpus = entries = 0
    last = None
    for key in keys:
        if key == last:
            continue  # the same key on two merged sides: both were counted already
        last = key
        level_price = reference_micros(sign * key)
        if entries and level_price != price:
            out.append(BookLevel(price, gpus, entries))
            if len(out) == depth:
                return tuple(out)
            gpus = entries = 0
        price = level_price
        for side in live:
            queue = side.levels.get(key)
            if queue:
                entries += len(queue)
                gpus += sum(entry.remaining for entry in queue)
    if entries:
        out.append(BookLevel(price, gpus, entries))
    return tuple(out)


def book_levels(book: GpuBook | None, gpu: str, tier: str, depth: int = DEPTH) -> BookLevels:
    """Both sides of the book of ``gpu`` and ``tier`` (empty sides for an unknown book)."""
    if depth < 1:
        raise ValueError("depth must be at least 1")
    if book is None or tier not in book.bid_sides:
        return BookLevels(gpu, tier, (), ())
    return BookLevels(
        gpu,
        tier,
        side_levels(book.bid_sides[tier], -1, depth),
        side_levels((book.asks[tier],), 1, depth),
    )


def changed_books(changes: Iterable[LevelChange]) -> list[tuple[str, str]]:
    """The books (gpu, tier) whose levels a result's level changes touch, each once, in
    order; a bid for ``any`` tier touches both of its GPU model's books."""
    books: dict[tuple[str, str], None] = {}
    for change in changes:
        level = change.level
        if level.tier == Tier.ANY:
            for tier in BOOK_TIERS:
                books[(level.gpu, str(tier))] = None
        else:
            books[(level.gpu, str(level.tier))] = None
    return list(books)
