"""Pricing's unit of work on PostgreSQL: one transaction; the read models follow its commit."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import asyncpg

from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import PostgresUnitOfWork
from gpux_pricing.adapters.postgres.history import PostgresCandles, PostgresTrades
from gpux_pricing.adapters.postgres.repositories import (
    PostgresBookVersions,
    PostgresGpus,
    PostgresOffers,
    PostgresRates,
    PostgresSellers,
)
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.history import HistoryMarks
from gpux_pricing.service.market import BookCache, Books
from gpux_pricing.service.unit_of_work import ReadModels

SCHEMA = "pricing"


class PostgresPricingUnitOfWork(PostgresUnitOfWork):
    """Pricing's tables, inbox and outbox in one transaction.

    Just before the commit, the books the unit changed become their changed quotes (one
    ``best_ask.changed`` each, in the outbox insert) and the histories it changed are read;
    once it committed, both go to the read models (Redis), once per unit.
    """

    sellers: PostgresSellers
    gpus: PostgresGpus
    rates: PostgresRates
    offers: PostgresOffers
    book_versions: PostgresBookVersions
    trades: PostgresTrades
    candles: PostgresCandles
    books: Books
    history: HistoryMarks

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        cache: BookCache,
        read_models: ReadModels,
        clock: Clock,
        band_for: Callable[[str], Band],
    ) -> None:
        super().__init__(pool, SCHEMA)
        self._cache = cache
        self._read_models = read_models
        self._clock = clock
        self._band_for = band_for
        self._histories: list[Snapshot] = []

    def _begun(self) -> None:
        conn = self.conn
        self.sellers = PostgresSellers(conn)
        self.gpus = PostgresGpus(conn)
        self.rates = PostgresRates(conn)
        self.offers = PostgresOffers(conn)
        self.book_versions = PostgresBookVersions(conn)
        self.trades = PostgresTrades(conn)
        self.candles = PostgresCandles(conn)
        self.books = Books(
            self._cache,
            offers=self.offers,
            versions=self.book_versions,
            rates=self.rates,
            now=self.now,
        )
        self.history = HistoryMarks(trades=self.trades, candles=self.candles, rates=self.rates)
        self._histories = []

    def now(self) -> datetime:
        """The service's time."""
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
        """Roll back; the books this unit changed in memory are loaded again when next used."""
        try:
            await super().rollback()
        finally:
            self.books.rolled_back()

    async def after_commit(self) -> None:
        """Write what the unit changed to the read models."""
        quotes = self.books.committed()
        try:
            await self._read_models.write_quotes(quotes, stream=True)
            await self._read_models.write_histories(self._histories)
        finally:
            self.books.release()
