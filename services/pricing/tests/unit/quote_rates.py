"""The instant and FX table the market and quote unit tests price at: 1 USD = 0.90 EUR."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from gpux_contracts.money import Currency
from gpux_pricing.domain.fx import Rate, RateTable

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
RATES = RateTable.of(Rate(Currency.USD, Currency.EUR, Decimal("0.90"), NOW))
