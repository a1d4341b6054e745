"""``book.levels_changed`` events: the aggregated levels of every book a command changed.

Written to the outbox in the command's transaction, like its trades and statuses, once per
book per command (``books_changed`` names each book once), with at most ``BOOK_DEPTH``
levels per side. The event id derives from the command's cause and the book, so a redelivered
input emits nothing new; ``sequence`` is the command's log sequence, so readers can drop an
older state of a book that reaches them after a newer one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from gpux_contracts.book import (
    BOOK_DEPTH,
    REFERENCE_CURRENCY,
    BookLevel,
    BookLevelsChanged,
    book_key,
)
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.offers import Tier
from gpux_contracts.topics import MARKET_BOOK
from gpux_matching.domain import BookLevel as EngineLevel
from gpux_matching.domain import BookLevels, MatchingEngine, Rate
from gpux_platform.broker import Outgoing

_MICROS = Decimal(1_000_000)


def converted(price_micros: int, rates: Mapping[str, Rate]) -> dict[Currency, Decimal]:
    """A reference price in every known currency (half-to-even to the micro-unit)."""
    out: dict[Currency, Decimal] = {}
    for code, rate in sorted(rates.items()):
        if code not in Currency.__members__:
            continue
        micros = (Decimal(price_micros) * _MICROS / Decimal(rate)).to_integral_value(
            rounding=ROUND_HALF_EVEN
        )
        out[Currency(code)] = canonical(from_micros(int(micros)))
    return out


def _level(level: EngineLevel, rates: Mapping[str, Rate]) -> BookLevel:
    return BookLevel(
        price=canonical(from_micros(level.price_micros)),
        currency=REFERENCE_CURRENCY,
        prices=converted(level.price_micros, rates),
        gpus=level.gpus,
        orders=level.entries,
    )


def levels_changed(
    levels: BookLevels, rates: Mapping[str, Rate], sequence: int, now: datetime
) -> BookLevelsChanged:
    """The contract event of one book's levels."""
    return BookLevelsChanged(
        gpu=levels.gpu,
        tier=Tier(levels.tier),
        bids=[_level(level, rates) for level in levels.bids],
        asks=[_level(level, rates) for level in levels.asks],
        depth=BOOK_DEPTH,
        sequence=sequence,
        as_of=now,
    )


def book_messages(
    engine: MatchingEngine,
    books: list[tuple[str, str]],
    sequence: int,
    now: datetime,
    envelope: Callable[[BookLevelsChanged, str], Envelope[Any]],
    base: str,
) -> list[Outgoing]:
    """The ``market.book`` records of the named books as the engine holds them now;
    ``envelope`` wraps a payload with an event id, derived here from ``base`` and the book."""
    rates = engine.rates
    messages = []
    for gpu, tier in books:
        levels = levels_changed(engine.levels(gpu, tier, BOOK_DEPTH), rates, sequence, now)
        key = book_key(gpu, tier)
        messages.append(Outgoing(MARKET_BOOK, key, envelope(levels, stable_id(base, "book", key))))
    return messages
