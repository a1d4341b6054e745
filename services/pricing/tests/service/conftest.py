"""A memory unit of work that knows the catalog's RTX 4090 and the default FX file's rates, and
a restart on its store."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from gpux_contracts.money import Currency
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.fx import Rate
from gpux_pricing.entrypoints.loops import rebuild_read_models
from gpux_pricing.service.market import BookCache

START = datetime(2026, 11, 29, 12, tzinfo=UTC)
RATES_AS_OF = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    """The service's time, moved by hand."""
    return ManualClock(START)


def pricing_unit(clock: ManualClock) -> MemoryPricingUnitOfWork:
    """One process's store and books: 1 USD = 0.92 EUR, 1 GBP = 1.18 EUR; GPU ``rtx-4090``."""
    uow = MemoryPricingUnitOfWork(clock=clock, band_for=PricingSettings().band_for)
    uow.state.gpus["rtx-4090"] = "RTX 4090"
    uow.state.rates[Currency.USD] = Rate(Currency.USD, Currency.EUR, Decimal("0.92"), RATES_AS_OF)
    uow.state.rates[Currency.GBP] = Rate(Currency.GBP, Currency.EUR, Decimal("1.18"), RATES_AS_OF)
    return uow


@pytest.fixture
def unit(clock: ManualClock) -> MemoryPricingUnitOfWork:
    """One process's store and books (``pricing_unit``)."""
    return pricing_unit(clock)


async def restart(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> tuple[MemoryPricingUnitOfWork, MemoryReadModels]:
    """A new process on ``unit``'s store (its own books in memory, empty read models) after
    its start's rebuild of the read models: its unit of work and its read models."""
    fresh = MemoryReadModels()
    restarted = MemoryPricingUnitOfWork(
        clock=clock,
        band_for=PricingSettings().band_for,
        state=unit.state,
        cache=BookCache(),
        read_models=fresh,
    )
    await rebuild_read_models(lambda: restarted, fresh, clock)
    return restarted, fresh
