"""FX rates for the book: the latest rate per currency from ``fx.rates``.

Every instance reads ``fx.rates`` whole (no group); the engine ranks prices by their value in
the reference currency, so it takes a rate as reference micro-units per unit of a currency.
The newest rate of a currency wins (``gpux_contracts.fx.supersedes``, the one FX rule), so
reading the topic again from the start, as every start does, never steps a rate back.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from gpux_contracts.fx import RatePublished, supersedes
from gpux_contracts.money import MICROS_PER_UNIT, REFERENCE_CURRENCY


def fx_rates(rate: RatePublished) -> dict[str, Decimal] | None:
    """The engine's rates from one published rate (reference micro-units per unit); None
    for a rate not quoted in the reference currency."""
    if rate.quote != REFERENCE_CURRENCY or rate.base == REFERENCE_CURRENCY:
        return None
    return {str(rate.base): rate.rate * MICROS_PER_UNIT}


class FxFeed:
    """The latest rate per currency, and whether the topic was read up to where it ended at
    start (before that, a rate may still be an old one)."""

    def __init__(self) -> None:
        self._latest: dict[str, tuple[datetime, Decimal]] = {}
        self._end: int | None = None
        self.caught_up = False
        """True once the records that were on the topic at start have been read."""

    def set_end(self, end: int) -> None:
        """The topic's end offset at start: until it is reached, rates may still be old."""
        self._end = end
        self.caught_up = end == 0

    def apply(self, rate: RatePublished | None, offset: int) -> bool:
        """Take the record at ``offset`` (None: not a rate); True when the latest rates
        changed or the feed just caught up."""
        was = self.caught_up
        if self._end is not None and offset + 1 >= self._end:
            self.caught_up = True
        changed = False
        if rate is not None and (rates := fx_rates(rate)) is not None:
            for currency, value in rates.items():
                known = self._latest.get(currency)
                if supersedes(rate.as_of, None if known is None else known[0]):
                    self._latest[currency] = (rate.as_of, value)
                    changed = changed or known is None or known[1] != value
        return self.caught_up and (changed or not was)

    def rates(self) -> dict[str, Decimal]:
        """The latest rate of each currency (reference micro-units per unit)."""
        return {currency: value for currency, (_, value) in self._latest.items()}
