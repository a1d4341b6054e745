"""Money for people: an API amount shown to its currency's precision in the reader's locale.

The API sends amounts as decimal strings to the micro-unit (``1.467391``); a table shows
``$1.47``: babel's ``format_currency`` with the currency's own digits (two for USD, EUR and
GBP, none for JPY), rounded by the exchange's one rule (``gpux_contracts.money.ROUNDING``),
never through a float. The locale is ``--locale`` or ``GPUX_LOCALE`` (``en_US`` when neither
is given, so the output is the same on every machine); ``--json`` shows the API's own strings.
"""

from __future__ import annotations

import decimal
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation

from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency

from gpux_contracts.money import ROUNDING

LOCALE_ENV = "GPUX_LOCALE"
DEFAULT_LOCALE = "en_US"
DASH = "—"

_locale: ContextVar[str] = ContextVar("gpux_locale", default=DEFAULT_LOCALE)
"""The locale amounts are written in, by name (babel caches what it parsed)."""


class BadLocale(ValueError):
    """A locale name babel does not know (``xx_YY``)."""


def use_locale(name: str) -> Locale:
    """Show amounts in locale ``name`` (``de_DE``, ``fr-CH``...) from now on; ``BadLocale``
    when it is none babel knows."""
    try:
        locale = Locale.parse(name.strip().replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        raise BadLocale(f"{name!r} is not a locale such as en_US or de_DE") from None
    _locale.set(str(locale))
    return locale


def money(amount: str | None, currency: str | None) -> str:
    """``1.467391`` USD as ``$1.47`` in the current locale; a dash without an amount; an
    amount that is no decimal (or no currency) as it came, rather than a wrong figure."""
    if amount is None:
        return DASH
    if not currency:
        return str(amount)
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        return f"{amount} {currency}"
    with decimal.localcontext() as context:
        context.rounding = ROUNDING
        return format_currency(value, str(currency), locale=_locale.get())


def per_gpu_hour(amount: str | None, currency: str | None) -> str:
    """``$0.40/GPU-h`` (a dash without an amount)."""
    shown = money(amount, currency)
    return shown if shown == DASH else f"{shown}/GPU-h"
