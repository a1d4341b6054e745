"""Amounts for people: the currency's precision, the locale's form, the exchange's rounding."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpux_devinfra.amounts import DEFAULT_LOCALE, BadLocale, money, per_gpu_hour, use_locale

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def en_us() -> Iterator[None]:
    use_locale(DEFAULT_LOCALE)
    yield
    use_locale(DEFAULT_LOCALE)


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        ("1.467391", "USD", "$1.47"),
        ("0.3712", "EUR", "€0.37"),
        ("1234.5", "GBP", "£1,234.50"),
        ("0.125", "USD", "$0.12"),  # half to even, the exchange's one rule
        ("0.135", "USD", "$0.14"),
        ("0", "USD", "$0.00"),
        ("99999999.995", "USD", "$100,000,000.00"),
    ],
)
def test_an_amount_is_shown_to_its_currencys_precision(
    amount: str, currency: str, shown: str
) -> None:
    assert money(amount, currency) == shown


def test_a_currency_without_minor_units_shows_none() -> None:
    assert money("1234.56", "JPY") == "¥1,235"


def test_the_locale_writes_the_amount() -> None:
    use_locale("de-DE")
    assert money("1234.5", "EUR") == "1.234,50\u00a0€"
    assert per_gpu_hour("0.4", "USD") == "0,40\u00a0$/GPU-h"


def test_nothing_to_show_and_what_is_no_amount() -> None:
    assert money(None, "USD") == "—"
    assert per_gpu_hour(None, "USD") == "—"
    assert money("n/a", "USD") == "n/a USD"  # as it came, never a wrong figure
    assert money("1.5", None) == "1.5"


@pytest.mark.parametrize("name", ["xx_YY", "", "en_US_POSIX_what"])
def test_an_unknown_locale_is_refused(name: str) -> None:
    with pytest.raises(BadLocale):
        use_locale(name)
    assert money("1", "USD") == "$1.00"  # the locale in use stays
