"""Rates between wallet and offer currencies, from rates into the reference currency (pure).

``fx.rates`` carries, per currency, how many units of the reference currency (EUR,
``gpux_contracts.money.REFERENCE_CURRENCY``) one unit buys. Billing converts the
offer's currency into the wallet's: the rate is the quotient of the two, at 28 significant
digits (a ledger FX rate's precision); its timestamp is the older of the two rates'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext

from gpux_contracts.fx import RatePublished, supersedes
from gpux_contracts.money import REFERENCE_CURRENCY, Currency

_DIGITS = 28


@dataclass(frozen=True, slots=True)
class ToReference:
    """One unit of ``currency`` buys ``rate`` units of the reference currency, as of ``as_of``."""

    currency: Currency
    rate: Decimal
    as_of: datetime


def to_reference(rate: RatePublished) -> ToReference | None:
    """The rate as billing keeps it, or None when it is not into the reference currency."""
    if rate.quote is not REFERENCE_CURRENCY or rate.base is REFERENCE_CURRENCY:
        return None  # other pairs are not billing's
    return ToReference(rate.base, rate.rate, rate.as_of)


def replaces(candidate: ToReference, current: ToReference | None) -> bool:
    """Whether a rate replaces the one held for its currency (the one FX rule)."""
    return supersedes(candidate.as_of, None if current is None else current.as_of)


class NoRate(LookupError):
    """A currency without a rate into the reference currency."""


def cross(
    rates: dict[Currency, ToReference], base: Currency, quote: Currency
) -> tuple[Decimal, datetime | None]:
    """Units of ``quote`` one unit of ``base`` buys, and as of when (None: the same currency)."""
    if base is quote:
        return Decimal(1), None
    legs = [rates.get(c) for c in (base, quote) if c is not REFERENCE_CURRENCY]
    if any(leg is None for leg in legs):
        raise NoRate(f"no rate between {base.value} and {quote.value}")
    base_rate = Decimal(1) if base is REFERENCE_CURRENCY else rates[base].rate
    quote_rate = Decimal(1) if quote is REFERENCE_CURRENCY else rates[quote].rate
    with localcontext(prec=_DIGITS):
        rate = (base_rate / quote_rate).normalize()
    as_of = min(leg.as_of for leg in legs if leg is not None)
    return rate, as_of
