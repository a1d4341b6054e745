"""Pricing's unit of work on PostgreSQL: one transaction; the read models follow its commit."""

from __future__ import annotations

from collections.abc import Callable

import asyncpg

from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import PostgresUnitOfWork
from gpux_pricing.adapters.postgres.history import PostgresCandles, PostgresTrades
from gpux_pricing.adapters.postgres.repositories import (
    PostgresBookVersions,
    PostgresGpus,
    PostgresOffers,
    PostgresRates,
    PostgresReliability,
    PostgresSellers,
)
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import ReadModels
from gpux_pricing.service.unit_steps import PricingUnitSteps

SCHEMA = "pricing"


class PostgresPricingUnitOfWork(PricingUnitSteps, PostgresUnitOfWork):
    """Pricing's tables, inbox and outbox in one transaction.

    Just before the commit, the books the unit changed become their changed quotes (one
    ``best_ask.changed`` each, in the outbox insert) and the histories it changed are read;
    once it committed, both go to the read models (Redis), once per unit.
    """

    sellers: PostgresSellers
    gpus: PostgresGpus
    rates: PostgresRates
    offers: PostgresOffers
    reliability: PostgresReliability
    book_versions: PostgresBookVersions
    trades: PostgresTrades
    candles: PostgresCandles

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
        self._keep(cache=cache, read_models=read_models, clock=clock, band_for=band_for)

    def _begun(self) -> None:
        conn = self.conn
        self.sellers = PostgresSellers(conn)
        self.gpus = PostgresGpus(conn)
        self.rates = PostgresRates(conn)
        self.offers = PostgresOffers(conn)
        self.reliability = PostgresReliability(conn)
        self.book_versions = PostgresBookVersions(conn)
        self.trades = PostgresTrades(conn)
        self.candles = PostgresCandles(conn)
        self._mark_books()
