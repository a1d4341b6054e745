"""FX rates and conversion into the reference currency (pure; times come in as arguments).

A rate says how many units of the quote currency one unit of the base currency buys,
as a Decimal with its timestamp. The book ranks offers by their value in the reference
currency (``gpux_contracts.money.REFERENCE_CURRENCY``); conversions keep full Decimal
precision and only the one money rule (``gpux_contracts.money.quantize``) rounds, when an
amount becomes micro-units. Which rate is kept is the FX rule of ``gpux_contracts.fx``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpux_contracts.fx import supersedes
from gpux_contracts.money import REFERENCE_CURRENCY, Currency, quantize, to_micros


class FxError(ValueError):
    """A conversion that cannot be made: no rate, or a rate too old."""


@dataclass(frozen=True, slots=True)
class Rate:
    """One unit of ``base`` buys ``value`` units of ``quote``, as of ``as_of``."""

    base: Currency
    quote: Currency
    value: Decimal
    as_of: datetime

    def __post_init__(self) -> None:
        if not self.value.is_finite() or self.value <= 0:
            raise FxError(f"{self.base}/{self.quote}: a rate must be positive")


@dataclass(frozen=True, slots=True)
class RateTable:
    """The latest rate of each currency into the reference currency."""

    to_reference: dict[Currency, Rate]

    @classmethod
    def of(cls, *rates: Rate) -> RateTable:
        """A table from rates into the reference currency (the reference itself is implied)."""
        table: dict[Currency, Rate] = {}
        for rate in rates:
            if rate.quote is not REFERENCE_CURRENCY:
                raise FxError(
                    f"rates must quote {REFERENCE_CURRENCY}, got {rate.base}/{rate.quote}"
                )
            table[rate.base] = rate
        return cls(table)

    def with_rate(self, rate: Rate) -> RateTable:
        """This table with one rate replaced, if the FX rule lets it (``supersedes``)."""
        current = self.to_reference.get(rate.base)
        if not supersedes(rate.as_of, None if current is None else current.as_of):
            return self
        return RateTable({**self.to_reference, rate.base: rate})

    def factor(self, currency: Currency, now: datetime, max_age: timedelta | None) -> Decimal:
        """Reference units per unit of ``currency``."""
        if currency is REFERENCE_CURRENCY:
            return Decimal(1)
        rate = self.to_reference.get(currency)
        if rate is None:
            raise FxError(f"no {currency}/{REFERENCE_CURRENCY} rate")
        if max_age is not None and now - rate.as_of > max_age:
            raise FxError(
                f"the {currency}/{REFERENCE_CURRENCY} rate of {rate.as_of.isoformat()} is stale"
            )
        return rate.value

    def convert(
        self,
        amount: Decimal,
        source: Currency,
        target: Currency,
        now: datetime,
        max_age: timedelta | None = None,
    ) -> Decimal:
        """An amount in another currency, exact to the micro-unit (the one rounding rule)."""
        if source is target:
            return amount
        in_reference = amount * self.factor(source, now, max_age)
        return quantize(in_reference / self.factor(target, now, max_age))

    def reference_micros(self, amount: Decimal, currency: Currency, now: datetime) -> int:
        """An amount's value in reference micro-units, for ranking."""
        return to_micros(quantize(amount * self.factor(currency, now, None)))

    def in_every_currency(
        self, amount: Decimal, source: Currency, now: datetime
    ) -> dict[Currency, Decimal]:
        """An amount converted into each currency a rate is known for (others left out)."""
        prices: dict[Currency, Decimal] = {}
        for target in Currency:
            try:
                prices[target] = self.convert(amount, source, target, now)
            except FxError:
                continue  # no rate for that currency: left out rather than guessed
        return prices
