"""Pricing's fake unit of work: its state in memory, committed or restored whole."""

from __future__ import annotations

from collections.abc import Callable

from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import MemoryUnitOfWork
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.repositories import (
    MemoryBookVersions,
    MemoryCandles,
    MemoryGpus,
    MemoryOffers,
    MemoryRates,
    MemoryReliability,
    MemorySellers,
    MemoryTrades,
    PricingState,
)
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import ReadModels
from gpux_pricing.service.unit_steps import PricingUnitSteps


class MemoryPricingUnitOfWork(PricingUnitSteps, MemoryUnitOfWork):
    """Pricing's state, inbox and outbox in memory, with the same commit steps as PostgreSQL.

    ``cache`` is the process's books (kept across units, as in the service); ``read_models``
    collects what would go to Redis. Rolling back restores the state; the books the unit
    changed in memory are loaded again.
    """

    state: PricingState
    sellers: MemorySellers
    gpus: MemoryGpus
    rates: MemoryRates
    offers: MemoryOffers
    reliability: MemoryReliability
    book_versions: MemoryBookVersions
    trades: MemoryTrades
    candles: MemoryCandles

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
        self._keep(
            cache=BookCache() if cache is None else cache,
            read_models=MemoryReadModels() if read_models is None else read_models,
            clock=clock,
            band_for=band_for,
        )

    def _begun(self) -> None:
        state = self.state
        self.sellers = MemorySellers(state)
        self.gpus = MemoryGpus(state)
        self.rates = MemoryRates(state)
        self.offers = MemoryOffers(state)
        self.reliability = MemoryReliability(state)
        self.book_versions = MemoryBookVersions(state)
        self.trades = MemoryTrades(state)
        self.candles = MemoryCandles(state)
        self._mark_books()
