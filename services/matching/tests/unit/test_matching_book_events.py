"""``book.levels_changed`` payloads from engine levels: reference prices and conversions."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from gpux_contracts.money import Currency
from gpux_matching.domain import BookLevel, BookLevels
from gpux_matching.service.publishing import converted, levels_changed

pytestmark = pytest.mark.unit

RATES: dict[str, int | Decimal] = {
    "EUR": 1_000_000,
    "USD": 900_000,
    "GBP": Decimal("1150000.5"),
    "XXX": 7,
}


def test_prices_convert_from_the_reference_half_even_and_skip_unknown_codes() -> None:
    assert converted(1_800_000, RATES) == {
        Currency.EUR: Decimal("1.80"),
        Currency.USD: Decimal("2.00"),
        Currency.GBP: Decimal("1.565217"),  # 1.8 / 1.1500005 = 1.5652167...
    }


def test_a_payload_keeps_both_sides_in_order_with_the_sequence() -> None:
    levels = BookLevels(
        "h100", "on_demand", (BookLevel(1_500_000, 2, 1),), (BookLevel(1_800_000, 8, 3),)
    )
    now = datetime(2026, 1, 1, tzinfo=UTC)
    payload = levels_changed(levels, {"EUR": 1_000_000}, 42, now)
    assert payload.model_dump(mode="json") == {
        "gpu": "h100",
        "tier": "on_demand",
        "bids": [
            {"price": "1.50", "currency": "EUR", "prices": {"EUR": "1.50"}, "gpus": 2, "orders": 1}
        ],
        "asks": [
            {"price": "1.80", "currency": "EUR", "prices": {"EUR": "1.80"}, "gpus": 8, "orders": 3}
        ],
        "depth": 20,
        "sequence": 42,
        "as_of": "2026-01-01T00:00:00Z",
    }
