"""Money: Decimal arithmetic, integer storage in micro-units, one rounding rule.

Storage scale: every amount is stored as an integer count of micro-units
(1 unit = 10**-6 of the currency), e.g. 0.33 USD is stored as 330_000.
Why micro-units and not cents: per-second billing accrues amounts such as
0.50 USD / 3600 s, and offer prices carry up to 4 decimals; micro-units hold
both exactly, while cents would round away most of a short lease.

Rounding rule (the only one): when an amount must become a whole number of
micro-units, it is rounded half-to-even (banker's rounding) by ``quantize``.
Nothing else in gpux rounds money.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

from gpux_contracts.base import FrozenModel

MICROS_PER_UNIT = 1_000_000
MICRO = Decimal("0.000001")
ROUNDING = ROUND_HALF_EVEN


class Currency(StrEnum):
    """ISO 4217 currencies a wallet or an offer may use."""

    EUR = "EUR"
    """Euro."""
    USD = "USD"
    """US dollar."""
    GBP = "GBP"
    """Pound sterling."""


REFERENCE_CURRENCY = Currency.EUR
"""The one currency every price is ranked and every FX rate is quoted in."""


class MoneyError(ValueError):
    """An amount that cannot be money: a float, NaN, infinity, or mixed currencies."""


def to_decimal(value: Any) -> Decimal:
    """Parse a money amount from a Decimal, int or decimal string; floats are refused."""
    if isinstance(value, bool | float):
        raise MoneyError("money amounts must be decimal strings, not floats")
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, str):
        try:
            result = Decimal(value.strip())
        except InvalidOperation as exc:
            raise MoneyError(f"not a decimal number: {value[:40]!r}") from exc
    else:
        raise MoneyError(f"not a decimal amount: {type(value).__name__}")
    if not result.is_finite():
        raise MoneyError("money amounts must be finite")
    return result


def quantize(amount: Decimal) -> Decimal:
    """Round an amount to whole micro-units with the one rounding rule (half-to-even)."""
    return amount.quantize(MICRO, rounding=ROUNDING)


def div_half_even(numerator: int, denominator: int) -> int:
    """``numerator / denominator`` as a whole number, rounded half-to-even.

    The one rounding rule in integer arithmetic, for hot paths: for integers it gives
    exactly what ``quantize`` gives for the same quotient in micro-units.
    """
    if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
        raise TypeError("div_half_even needs an int numerator and a positive int denominator")
    quotient, remainder = divmod(numerator, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


SECONDS_PER_HOUR = 3600


def accrued_micros(price_micros_per_hour: int, elapsed_s: int) -> int:
    """What ``elapsed_s`` whole seconds cost at a price per hour: round(price × s / 3600).

    Per-second metering is cumulative: a lease's charges are differences of this figure,
    so rounding never accumulates and a whole hour costs exactly the hourly price.
    """
    if type(price_micros_per_hour) is not int or type(elapsed_s) is not int:
        raise TypeError("accrued_micros needs an int price (micro-units) and int seconds")
    if price_micros_per_hour < 0 or elapsed_s < 0:
        raise ValueError("price and elapsed time cannot be negative")
    return div_half_even(price_micros_per_hour * elapsed_s, SECONDS_PER_HOUR)


def to_micros(amount: Decimal) -> int:
    """Store an amount as integer micro-units; it must already be a whole number of them."""
    scaled = amount * MICROS_PER_UNIT
    if scaled != scaled.to_integral_value():
        raise MoneyError(f"{amount} has more than 6 decimals: quantize it first")
    return int(scaled)


def from_micros(micros: int) -> Decimal:
    """Read integer micro-units back as a Decimal amount."""
    return quantize(Decimal(micros) / MICROS_PER_UNIT)


def canonical(amount: Decimal) -> Decimal:
    """An amount for display: trailing zeros dropped, but at least two decimals (0.33, 1.2345)."""
    normal = amount.normalize()
    exponent = normal.as_tuple().exponent
    if isinstance(exponent, int) and exponent > -2:
        return normal.quantize(Decimal("0.01"))
    return normal


DecimalAmount = Annotated[
    Decimal,
    BeforeValidator(to_decimal),
    PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$", "examples": ["0.33"]}),
]
"""A Decimal that pydantic reads from strings/ints only and writes as a plain decimal string."""


class Money(FrozenModel):
    """An exact amount in one currency; serialised as ``{"amount": "0.33", "currency": "USD"}``."""

    amount: DecimalAmount
    currency: Currency

    @classmethod
    def of(cls, amount: str | int | Decimal, currency: Currency | str) -> Money:
        """Build Money from a decimal string, int or Decimal (never a float)."""
        return cls(amount=to_decimal(amount), currency=Currency(currency))

    @classmethod
    def from_micros(cls, micros: int, currency: Currency | str) -> Money:
        """Build Money from stored integer micro-units."""
        return cls(amount=from_micros(micros), currency=Currency(currency))

    @property
    def micros(self) -> int:
        """The amount as integer micro-units, rounded with the one rounding rule."""
        return to_micros(quantize(self.amount))

    def quantized(self) -> Money:
        """This amount rounded to whole micro-units."""
        return Money(amount=quantize(self.amount), currency=self.currency)

    def _same(self, other: Money) -> None:
        if other.currency != self.currency:
            raise MoneyError(f"cannot combine {self.currency} with {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(amount=self.amount + other.amount, currency=self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(amount=self.amount - other.amount, currency=self.currency)

    def __mul__(self, factor: Decimal | int) -> Money:
        if isinstance(factor, float):
            raise MoneyError("multiply money by a Decimal or int, not a float")
        return Money(amount=self.amount * factor, currency=self.currency)

    def __lt__(self, other: Money) -> bool:
        self._same(other)
        return self.amount < other.amount

    def __le__(self, other: Money) -> bool:
        self._same(other)
        return self.amount <= other.amount

    def __str__(self) -> str:
        return f"{format(self.amount, 'f')} {self.currency.value}"
