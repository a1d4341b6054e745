from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gpux_contracts.money import (
    Currency,
    Money,
    MoneyError,
    accrued_micros,
    canonical,
    div_half_even,
    from_micros,
    quantize,
    to_decimal,
    to_micros,
)

amounts = st.decimals(min_value=-(10**9), max_value=10**9, places=6, allow_nan=False)


def test_reads_decimal_strings_and_writes_them_back() -> None:
    money = Money.model_validate_json('{"amount": "0.33", "currency": "USD"}')
    assert money.amount == Decimal("0.33")
    assert money.currency is Currency.USD
    assert money.model_dump_json() == '{"amount":"0.33","currency":"USD"}'


@pytest.mark.parametrize("bad", [0.33, float("nan"), "NaN", "Infinity", "-inf", "abc", True, None])
def test_refuses_floats_and_non_finite_amounts(bad: object) -> None:
    with pytest.raises((MoneyError, ValidationError)):
        Money.model_validate({"amount": bad, "currency": "EUR"})


def test_refuses_unknown_currency() -> None:
    with pytest.raises(ValidationError):
        Money.model_validate({"amount": "1", "currency": "JPY"})


def test_cannot_mix_currencies() -> None:
    with pytest.raises(MoneyError):
        _ = Money.of("1", "EUR") + Money.of("1", "USD")


def test_rounding_is_half_to_even_at_micro_units() -> None:
    assert quantize(Decimal("0.0000005")) == Decimal("0.000000")
    assert quantize(Decimal("0.0000015")) == Decimal("0.000002")
    assert quantize(Decimal("0.0000025")) == Decimal("0.000002")


def test_per_second_charge_of_example_lease_is_exact() -> None:
    # 2 GPUs at 0.50 USD per GPU-hour for 90 s is exactly 0.025 USD.
    price = Money.of("0.50", "USD") * 2
    charge = (price * 90).amount / 3600
    assert to_micros(quantize(charge)) == 25_000


def test_to_micros_refuses_unrounded_amounts() -> None:
    with pytest.raises(MoneyError):
        to_micros(Decimal("0.0000001"))


@given(amounts)
def test_micros_round_trip(amount: Decimal) -> None:
    assert from_micros(to_micros(amount)) == amount
    assert Money.from_micros(Money.of(amount, "GBP").micros, "GBP").amount == amount


@given(amounts, amounts)
def test_addition_is_exact(a: Decimal, b: Decimal) -> None:
    total = Money.of(a, "EUR") + Money.of(b, "EUR")
    assert total.micros == to_micros(a) + to_micros(b)


def test_to_decimal_refuses_floats() -> None:
    with pytest.raises(MoneyError):
        to_decimal(1.5)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("0.330000", "0.33"),
        ("1", "1.00"),
        ("1.234500", "1.2345"),
        ("100", "100.00"),
        ("0.000001", "0.000001"),
    ],
)
def test_canonical_display(raw: str, shown: str) -> None:
    assert format(canonical(Decimal(raw)), "f") == shown


@given(
    st.integers(min_value=-(10**24), max_value=10**24),
    st.integers(min_value=1, max_value=10**12),
)
def test_div_half_even_is_the_one_rounding_rule(numerator: int, denominator: int) -> None:
    exact = Decimal(numerator) / Decimal(denominator)
    with localcontext(prec=80):
        expected = (Decimal(numerator) / Decimal(denominator)).quantize(
            Decimal(1), rounding=ROUND_HALF_EVEN
        )
    assert div_half_even(numerator, denominator) == int(expected), exact


def test_div_half_even_ties_go_to_even() -> None:
    assert [div_half_even(n, 2) for n in (1, 3, 5, -1, -3)] == [0, 2, 2, 0, -2]


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=10**7))
def test_accrued_micros_matches_decimal_quantize(price: int, seconds: int) -> None:
    with localcontext(prec=80):
        expected = to_micros(quantize(from_micros(price) * seconds / 3600))
    assert accrued_micros(price, seconds) == expected


def test_accrued_micros_of_the_issue_example() -> None:
    # 2 GPUs at 0.50 USD per GPU-hour for 90 s: exactly 0.025 USD.
    assert accrued_micros(1_000_000, 90) == 25_000
    assert accrued_micros(1_000_000, 3600) == 1_000_000
