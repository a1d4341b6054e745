"""Best asks in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from gpux_billing.domain.holds import Ask, Book, cheapest
from gpux_contracts.money import Currency
from gpux_contracts.prices import BestAskChanged

Quote = tuple[dict[Currency, Decimal] | None, datetime]
"""A book's best ask in each currency (None: the book is empty) and as of when."""


class MemoryBestAsks:
    """Best asks in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, books: dict[Book, Quote]) -> None:
        self._books = books

    async def record(self, change: BestAskChanged) -> None:
        """Keep a book's best ask unless a newer one is held (an equal time replaces it)."""
        book = (change.gpu, change.tier, change.region)
        held = self._books.get(book)
        if held is None or held[1] <= change.as_of:
            prices = None if change.best is None else dict(change.best.prices)
            self._books[book] = (prices, change.as_of)

    async def best_many(self, asks: Iterable[Ask]) -> dict[Ask, Decimal | None]:
        """The cheapest best ask each (gpu, tier, region, currency) could take, per GPU-hour in
        its currency (None: none)."""
        books = {book: prices for book, (prices, _) in self._books.items() if prices is not None}
        return {ask: cheapest(ask, books) for ask in set(asks)}
