"""Rates between wallet and offer currencies, from rates into EUR (pure).

``fx.rates`` carries, per currency, how many euros one unit buys. Billing converts the
offer's currency into the wallet's: the rate is the quotient of the two, at 28 significant
digits (a ledger FX rate's precision); its timestamp is the older of the two rates'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext

from gpux_contracts.money import Currency

REFERENCE = Currency.EUR
_DIGITS = 28


@dataclass(frozen=True, slots=True)
class ToReference:
    """One unit of ``currency`` buys ``rate`` euros, as of ``as_of``."""

    currency: Currency
    rate: Decimal
    as_of: datetime


class NoRate(LookupError):
    """A currency without a rate into the reference currency."""


def cross(
    rates: dict[Currency, ToReference], base: Currency, quote: Currency
) -> tuple[Decimal, datetime | None]:
    """Units of ``quote`` one unit of ``base`` buys, and as of when (None: the same currency)."""
    if base is quote:
        return Decimal(1), None
    legs = [rates.get(c) for c in (base, quote) if c is not REFERENCE]
    if any(leg is None for leg in legs):
        raise NoRate(f"no rate between {base.value} and {quote.value}")
    base_rate = Decimal(1) if base is REFERENCE else rates[base].rate
    quote_rate = Decimal(1) if quote is REFERENCE else rates[quote].rate
    with localcontext(prec=_DIGITS):
        rate = (base_rate / quote_rate).normalize()
    as_of = min(leg.as_of for leg in legs if leg is not None)
    return rate, as_of
