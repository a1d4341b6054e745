"""What every pricing unit of work does around its store's transaction, whatever the store.

Both units (``adapters.postgres`` and ``adapters.memory``) build their repositories, then
``PricingUnitSteps`` builds the books and the history marks on them; just before the store
commits, the trades the unit staged are recorded and rolled into their candles (a statement
each), the sellers' counts it staged are kept and their books marked (a statement and a
query), the books the unit changed become their changed quotes (one ``best_ask.changed``
each, in the outbox) and the histories it changed are read; once it committed, both go to
the read models, once per unit. The mixin stands before the store's unit of work in the
class's bases, so ``super()`` is that store (the platform's Memory- or PostgresUnitOfWork).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import cast

from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import Outbox, UnitOfWork
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.history import HistoryMarks
from gpux_pricing.service.market import BookCache, Books
from gpux_pricing.service.reliability import ReliabilityChanges
from gpux_pricing.service.unit_of_work import (
    BookVersionRepository,
    CandleRepository,
    OfferRepository,
    RateRepository,
    ReadModels,
    ReliabilityRepository,
    TradeRepository,
)


class PricingUnitSteps:
    """The books, the history marks, the clock and the bands of a pricing unit of work."""

    outbox: Outbox
    offers: OfferRepository
    book_versions: BookVersionRepository
    rates: RateRepository
    reliability: ReliabilityRepository
    trades: TradeRepository
    candles: CandleRepository
    books: Books
    history: HistoryMarks
    reliability_changes: ReliabilityChanges

    def _keep(
        self,
        *,
        cache: BookCache,
        read_models: ReadModels,
        clock: Clock,
        band_for: Callable[[str], Band],
    ) -> None:
        """Hold what the units of a process share (a store's ``__init__`` calls this)."""
        self.cache = cache
        self.read_models = read_models
        self._clock = clock
        self._band_for = band_for
        self._histories: list[Snapshot] = []

    def _mark_books(self) -> None:
        """Build the books and history marks on the repositories (once they are built)."""
        self.books = Books(
            self.cache,
            offers=self.offers,
            versions=self.book_versions,
            rates=self.rates,
            reliability=self.reliability,
            now=self.now,
        )
        self.history = HistoryMarks(trades=self.trades, candles=self.candles, rates=self.rates)
        self.reliability_changes = ReliabilityChanges(
            reliability=self.reliability, offers=self.offers, books=self.books
        )
        self._histories = []

    def now(self) -> datetime:
        """The unit's time (the service's clock, or the test's)."""
        return self._clock.now()

    def band_for(self, gpu: str) -> Band:
        """The sanity band of one GPU model."""
        return self._band_for(gpu)

    async def commit(self) -> None:
        """Record and roll the staged trades, keep the staged sellers' counts, queue the
        changed quotes, read the changed histories, then commit."""
        await self.history.flush()
        await self.reliability_changes.flush()
        self.outbox.add(*await self.books.flush())
        self._histories = await self.history.snapshots()
        await cast(UnitOfWork, super()).commit()

    async def rollback(self) -> None:
        """Roll back; the books this unit changed in memory are loaded again when next used."""
        try:
            await cast(UnitOfWork, super()).rollback()
        finally:
            self.books.rolled_back()

    async def after_commit(self) -> None:
        """Write what the unit changed to the read models."""
        quotes = self.books.committed()
        try:
            await self.read_models.write_quotes(quotes, stream=True)
            await self.read_models.write_histories(self._histories)
        finally:
            self.books.release()
