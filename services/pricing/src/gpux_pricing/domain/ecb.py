"""The ECB's euro foreign exchange reference rates (its daily XML), read as gpux's rates (pure).

The ECB publishes, once a working day around 16:00 CET, how many units of each currency one
euro buys (``<Cube currency='USD' rate='1.0705'/>``: 1 EUR = 1.0705 USD). gpux quotes every
rate into the reference currency, which is the euro too, so USD→EUR is the inverse, 1/1.0705.

The one rule for that inverse: it is rounded half-to-even (money's ``ROUNDING``) to
``RATE_DECIMALS`` = 10 decimal places. A rate is not an amount, so it is not quantized to
micro-units: ten places keep about ten significant figures for every currency gpux trades
(the ECB's own figures carry five or six), so a converted amount is exact to the micro-unit up
to about 10,000 units; the amount itself is then rounded by money's ``quantize``, as always.

The rates' time is their day at the ECB's concertation, 14:15 CET, written as 13:15 UTC all
year: it is never after the publication (16:00 CET or CEST), so a rate never looks younger
than it is by more than the few hours it takes the ECB to publish it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from xml.parsers import expat

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import REFERENCE_CURRENCY, ROUNDING, Currency

EUROFXREF = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
"""The namespace of the ECB's ``Cube`` elements."""
RATE_DECIMALS = 10
"""Decimal places of an inverted ECB rate (rounded half-to-even)."""
RATE_QUANTUM = Decimal(1).scaleb(-RATE_DECIMALS)
CONCERTATION_UTC = time(13, 15, tzinfo=UTC)
"""When the ECB fixes the day's rates (14:15 CET), in UTC, as their ``as_of``."""
SOURCE = "ECB euro foreign exchange reference rates"


class EcbError(ValueError):
    """A document that is not the ECB's reference rates (or holds none gpux can use)."""


@dataclass(frozen=True, slots=True)
class EcbDay:
    """One day of the ECB's reference rates: units of each currency per euro."""

    day: date
    per_euro: dict[str, Decimal]


def parse(document: bytes) -> EcbDay:
    """The newest day of an ECB reference rates document (the daily file holds one day, the
    90-day and historical files many)."""
    days: dict[str, list[tuple[str, str]]] = {}
    for attrs in _cubes(document):
        if "time" in attrs:
            day = days.setdefault(attrs["time"], [])
        elif "currency" in attrs and days:
            day.append((attrs["currency"], attrs.get("rate", "")))
    if not days:
        raise EcbError("no <Cube time=...> in the document")
    newest = max(days)
    try:
        when = date.fromisoformat(newest)
    except ValueError:
        raise EcbError(f"not a date: {newest[:20]!r}") from None
    return EcbDay(when, {code: _rate(code, value) for code, value in days[newest]})


def _cubes(document: bytes) -> list[dict[str, str]]:
    """The attributes of every ``Cube`` element, in document order.

    Read with expat itself, refusing what the ECB's file never has (a DTD, entities), as
    defusedxml does: entity expansion and external entities never reach the parser.
    """
    cubes: list[dict[str, str]] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        if name == f"{EUROFXREF} Cube":
            cubes.append(attrs)

    def refuse(*_: object) -> None:
        raise EcbError("the document declares a DTD or entities, which the ECB's file never has")

    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = start
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    try:
        parser.Parse(document, True)
    except expat.ExpatError as exc:
        raise EcbError(f"not XML: {exc}") from None
    return cubes


def _rate(code: str, value: str) -> Decimal:
    try:
        rate = Decimal(value)
    except InvalidOperation:
        raise EcbError(f"{code[:3]}: not a decimal rate: {value[:20]!r}") from None
    if not rate.is_finite() or rate <= 0:
        raise EcbError(f"{code[:3]}: a rate must be positive, got {value[:20]!r}")
    return rate


def to_reference(per_euro: Decimal) -> Decimal:
    """Euros per unit of a currency that one euro buys ``per_euro`` of (the one rule above)."""
    rate = (Decimal(1) / per_euro).quantize(RATE_QUANTUM, rounding=ROUNDING)
    if rate == 0:
        raise EcbError(f"1 EUR = {per_euro}: its inverse is below {RATE_QUANTUM}")
    return rate


def as_of(day: date) -> datetime:
    """The time of a day's rates: the ECB's concertation that day, in UTC."""
    return datetime.combine(day, CONCERTATION_UTC)


def rates_of(ecb: EcbDay) -> list[RatePublished]:
    """The day's rates of every currency gpux knows (but the reference), into the reference.

    Currencies the ECB publishes and gpux does not trade are left out; a document with none of
    gpux's currencies is refused (it cannot be the ECB's reference rates).
    """
    wanted = sorted(c for c in Currency if c is not REFERENCE_CURRENCY and c.value in ecb.per_euro)
    if not wanted:
        raise EcbError(f"no rate for any of {', '.join(c.value for c in Currency)}")
    return [
        RatePublished(
            base=currency,
            quote=REFERENCE_CURRENCY,
            rate=to_reference(ecb.per_euro[currency.value]),
            as_of=as_of(ecb.day),
            source=f"{SOURCE} of {ecb.day.isoformat()}",
        )
        for currency in wanted
    ]
