"""FX rates in memory: the newest rate wins (``gpux_contracts.fx.supersedes``), as in SQL."""

from __future__ import annotations

from gpux_billing.domain.fx import ToReference, replaces
from gpux_contracts.money import Currency


class MemoryRates:
    """Rates in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, rates: dict[Currency, ToReference]) -> None:
        self._rates = rates

    async def all(self) -> dict[Currency, ToReference]:
        """The latest rate of each currency into the reference currency."""
        return dict(self._rates)

    async def record(self, rate: ToReference) -> None:
        """Keep a rate unless a newer one is held."""
        if replaces(rate, self._rates.get(rate.currency)):
            self._rates[rate.currency] = rate
