"""The rule-of-thumb fit: one written rule, its rounding, and its published constants."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from gpux_estimator import FIT_RULE, InvalidInputError, fit_for_memory
from gpux_estimator.fit import round_down_billions

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("memory_gb", "qlora_b", "lora16_b"),
    [(24, 15, 7), (32, 25, 10), (48, 35, 15), (80, 60, 25), (96, 75, 30), (141, 110, 45)],
)
def test_rule_reproduces_the_hand_checked_values(
    memory_gb: int, qlora_b: int, lora16_b: int
) -> None:
    fit = fit_for_memory(memory_gb)
    assert (fit.qlora_b, fit.lora16_b) == (qlora_b, lora16_b)


def test_full_and_inference_follow_the_same_rule() -> None:
    fit = fit_for_memory(80)
    assert fit.budget_gb == 64
    assert fit.full_b == 4  # 64 / 16 = 4.0
    assert fit.inference_fp16_b == 25  # 64 / 2.4 = 26.7 -> 25
    assert fit.inference_int8_b == 50  # 64 / 1.2 = 53.3 -> 50
    assert fit.inference_int4_b == 105  # 64 / 0.6 = 106.7 -> 105


def test_rounding_rule_boundaries() -> None:
    assert round_down_billions(Fraction(999, 100)) == 9
    assert round_down_billions(Fraction(10)) == 10
    assert round_down_billions(Fraction(1499, 100)) == 10
    assert round_down_billions(Fraction(15)) == 15
    assert round_down_billions(Fraction(1, 2)) == 0


def test_boundaries_are_hit_exactly_for_int_float_and_decimal_input() -> None:
    # The rule runs on Fractions, so a raw value of exactly 10 or 40 never becomes 9.999...
    assert fit_for_memory(50).qlora_b == 40
    assert fit_for_memory(50.0).qlora_b == 40
    assert fit_for_memory(12.5).qlora_b == 10
    assert fit_for_memory(Decimal("12.5")).qlora_b == 10


def test_constants_are_the_documented_ones() -> None:
    assert FIT_RULE.budget_fraction == Fraction(4, 5)
    assert FIT_RULE.qlora_bytes_per_param == 1
    assert FIT_RULE.lora16_bytes_per_param == Fraction(5, 2)
    assert FIT_RULE.full_bytes_per_param == 16


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "24", 2_000_000])
def test_invalid_memory_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="memory_gb"):
        fit_for_memory(bad)  # type: ignore[arg-type]
