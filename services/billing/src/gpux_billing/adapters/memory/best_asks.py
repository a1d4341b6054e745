"""Best asks in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from gpux_billing.domain.holds import tiers_of
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderTier
from gpux_contracts.prices import ALL_REGIONS, BestAskChanged

Book = tuple[str, str, str]
"""(gpu, tier, region)."""
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

    async def best(
        self, gpu: str, tier: OrderTier, region: str | None, currency: Currency
    ) -> Decimal | None:
        """The cheapest best ask an order could take, per GPU-hour in ``currency``."""
        found = [
            prices[currency]
            for t in tiers_of(tier)
            if (quote := self._books.get((gpu, t, region or ALL_REGIONS))) is not None
            and (prices := quote[0]) is not None
            and currency in prices
        ]
        return min(found) if found else None
