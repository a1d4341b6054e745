"""Conversions done once at the engine's edge: instants to epoch micros, prices to reference.

Reference prices: an FX rate says how many reference-currency micro-units one unit of a
currency is worth (the reference currency itself is 1_000_000). A price of ``p`` micros then
ranks as ``p * rate``, an integer in 10^-12 reference units. With integer rates the product
is exact, so two prices compare exactly as their values do; a Decimal rate with a fraction is
rounded half-to-even (gpux's one money rounding rule) to that 10^-12 scale, far below a
micro-unit. The hot path only ever compares these ints.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

Instant = datetime | int
"""A point in time: an aware datetime or integer epoch microseconds."""

Rate = int | Decimal
"""Reference-currency micro-units per unit of a currency."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(instant: Instant) -> int:
    """Epoch microseconds of an aware datetime or of an int already in epoch microseconds."""
    if isinstance(instant, bool):
        raise TypeError("an instant is an aware datetime or int epoch microseconds")
    if isinstance(instant, int):
        return instant
    if not isinstance(instant, datetime) or instant.utcoffset() is None:
        raise TypeError("an instant is an aware datetime or int epoch microseconds")
    return (instant - _EPOCH) // _MICROSECOND


def valid_rate(rate: object) -> Rate | None:
    """The rate in its canonical form (integral Decimals become ints), or None if invalid."""
    if isinstance(rate, bool) or not isinstance(rate, int | Decimal):
        return None
    if isinstance(rate, Decimal):
        if not rate.is_finite():
            return None
        if rate == rate.to_integral_value():
            rate = int(rate)
    return rate if rate > 0 else None


def reference_price(price_micros: int, rate: Rate) -> int:
    """A price's rank in 10^-12 reference units (exact for int rates)."""
    if isinstance(rate, int):
        return price_micros * rate
    return int((price_micros * rate).to_integral_value(rounding=ROUND_HALF_EVEN))


def rate_to_plain(rate: Rate) -> int | str:
    """A rate as JSON-friendly data: an int, or a Decimal's string."""
    return rate if isinstance(rate, int) else str(rate)


def rate_from_plain(value: int | str) -> Rate:
    """The inverse of ``rate_to_plain``."""
    if isinstance(value, int):
        return value
    parsed = valid_rate(Decimal(value))
    if parsed is None:
        raise ValueError(f"not a positive rate: {value!r}")
    return parsed


def rates_from(mapping: Mapping[str, object]) -> dict[str, Rate] | None:
    """Validated rates, or None if any is not a positive int or Decimal."""
    out: dict[str, Rate] = {}
    for currency, raw in mapping.items():
        rate = valid_rate(raw)
        if rate is None:
            return None
        out[currency] = rate
    return out
