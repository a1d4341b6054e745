"""Pricing's fake unit of work: its state in memory, committed or restored whole."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import MemoryUnitOfWork
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.repositories import (
    MemoryBookVersions,
    MemoryCandles,
    MemoryGpus,
    MemoryOffers,
    MemoryRates,
    MemorySellers,
    MemoryTrades,
    PricingState,
)
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.history import HistoryMarks
from gpux_pricing.service.market import BookCache, Books
from gpux_pricing.service.unit_of_work import ReadModels


class MemoryPricingUnitOfWork(MemoryUnitOfWork):
    """Pricing's state, inbox and outbox in memory, with the same commit steps as PostgreSQL.

    ``cache`` is the process's books (kept across units, as in the service); ``read_models``
    collects what would go to Redis.
    """

    state: PricingState
    sellers: MemorySellers
    gpus: MemoryGpus
    rates: MemoryRates
    offers: MemoryOffers
    book_versions: MemoryBookVersions
    trades: MemoryTrades
    candles: MemoryCandles
    books: Books
    history: HistoryMarks

    def __init__(
        self,
        *,
        clock: Clock,
        band_for: Callable[[str], Band],
        state: PricingState | None = None,
        cache: BookCache | None = None,
        read_models: ReadModels | None = None,
    ) -> None:
        super().__init__(PricingState() if state is None else state)
        self.cache = BookCache() if cache is None else cache
        self.read_models: ReadModels = MemoryReadModels() if read_models is None else read_models
        self._clock = clock
        self._band_for = band_for
        self._histories: list[Snapshot] = []

    def _begun(self) -> None:
        state = self.state
        self.sellers = MemorySellers(state)
        self.gpus = MemoryGpus(state)
        self.rates = MemoryRates(state)
        self.offers = MemoryOffers(state)
        self.book_versions = MemoryBookVersions(state)
        self.trades = MemoryTrades(state)
        self.candles = MemoryCandles(state)
        self.books = Books(
            self.cache,
            offers=self.offers,
            versions=self.book_versions,
            rates=self.rates,
            now=self.now,
        )
        self.history = HistoryMarks(trades=self.trades, candles=self.candles, rates=self.rates)
        self._histories = []

    def now(self) -> datetime:
        """The test's time."""
        return self._clock.now()

    def band_for(self, gpu: str) -> Band:
        """The sanity band of one GPU model."""
        return self._band_for(gpu)

    async def commit(self) -> None:
        """Queue the changed quotes, read the changed histories, then commit."""
        self.outbox.add(*await self.books.flush())
        self._histories = await self.history.snapshots()
        await super().commit()

    async def rollback(self) -> None:
        """Restore the state; the books this unit changed in memory are loaded again."""
        try:
            await super().rollback()
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
