"""Where billing rounds money: fee split, FX conversion, per-second accrual.

Per-second accrual is ``gpux_contracts.money.accrued_micros`` (the gateway shows the same
figure). Each function computes exactly (integers, or Decimal) and rounds once, with the
one rounding rule of ``gpux_contracts.money.quantize`` (half-to-even at the micro-unit). The
Decimal working precision is raised so the exact product reaches ``quantize`` unrounded
(a 16-digit amount times a 28-digit rate would otherwise be rounded twice).
"""

from __future__ import annotations

from decimal import Decimal, localcontext

from gpux_contracts.money import accrued_micros, div_half_even, from_micros, quantize, to_micros

__all__ = ["BPS_PER_UNIT", "accrued_micros", "convert", "fee_split"]

BPS_PER_UNIT = 10_000
"""Basis points in one whole: a fee of 1000 bps is 10 %."""
_PRECISION = 80


def _whole(value: object, what: str) -> int:
    if type(value) is not int:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return value


def fee_split(amount_micros: int, fee_bps: int) -> tuple[int, int]:
    """(seller_micros, fee_micros) of a charge: the fee is rounded, the seller gets the rest."""
    amount = _whole(amount_micros, "amount_micros")
    bps = _whole(fee_bps, "fee_bps")
    if amount < 0 or not 0 <= bps <= BPS_PER_UNIT:
        raise ValueError(f"fee_split needs amount >= 0 and 0 <= fee_bps <= 10000 ({amount}, {bps})")
    fee = div_half_even(amount * bps, BPS_PER_UNIT)
    return amount - fee, fee


def convert(amount_micros: int, rate: Decimal) -> int:
    """``amount_micros`` of one currency in micro-units of another at ``rate``, rounded once."""
    amount = _whole(amount_micros, "amount_micros")
    if not isinstance(rate, Decimal) or not rate.is_finite() or rate <= 0:
        raise ValueError(f"a rate must be a positive finite Decimal, not {rate!r}")
    with localcontext(prec=_PRECISION):
        return to_micros(quantize(from_micros(amount) * rate))
