"""Reading the ECB's euro foreign exchange reference rates (a recorded daily file) as gpux's
rates into the reference currency: the inversion and its one rounding rule, the rates' time,
and the documents refused."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_contracts.money import Currency
from gpux_pricing.domain import ecb

pytestmark = pytest.mark.unit

RECORDED = Path(__file__).resolve().parents[1] / "data" / "eurofxref-daily.xml"
"""The ECB's daily file as it is served (eurofxref-daily.xml), for 2026-11-27."""


def document(*days: tuple[str, dict[str, str]]) -> bytes:
    """An ECB document in the daily file's exact form, with the given days and rates."""
    cubes = "".join(
        f"<Cube time='{day}'>"
        + "".join(f"<Cube currency='{c}' rate='{r}'/>" for c, r in rates.items())
        + "</Cube>"
        for day, rates in days
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<gesmes:Envelope'
        ' xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"'
        ' xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">'
        "<gesmes:subject>Reference rates</gesmes:subject>"
        "<gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>"
        f"<Cube>{cubes}</Cube></gesmes:Envelope>"
    ).encode()


def test_the_recorded_daily_file_gives_usd_and_gbp_into_eur_as_of_the_concertation() -> None:
    day = ecb.parse(RECORDED.read_bytes())
    assert day.day == date(2026, 11, 27)
    assert len(day.per_euro) == 30
    assert day.per_euro["USD"] == Decimal("1.0870")
    usd, gbp = sorted(ecb.rates_of(day), key=lambda r: r.base.value, reverse=True)
    assert (usd.base, usd.quote, usd.rate) == (Currency.USD, Currency.EUR, Decimal("0.9199632015"))
    assert (gbp.base, gbp.quote, gbp.rate) == (Currency.GBP, Currency.EUR, Decimal("1.1800106201"))
    # 14:15 CET, written in winter time all year: never after the publication at 16:00.
    assert usd.as_of == gbp.as_of == datetime(2026, 11, 27, 13, 15, tzinfo=UTC)
    assert usd.source == "ECB euro foreign exchange reference rates of 2026-11-27"


def test_currencies_gpux_does_not_trade_are_left_out() -> None:
    rates = ecb.rates_of(ecb.parse(RECORDED.read_bytes()))
    assert {r.base for r in rates} == {Currency.USD, Currency.GBP}


def test_a_file_of_many_days_gives_its_newest() -> None:
    older = ("2026-11-26", {"USD": "1.0800", "GBP": "0.8400"})
    newest = ("2026-11-27", {"USD": "1.0870", "GBP": "0.84745"})
    assert ecb.parse(document(newest, older)).day == date(2026, 11, 27)
    assert ecb.parse(document(older, newest)).per_euro["USD"] == Decimal("1.0870")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>Service Unavailable</html>", "no <Cube time"),
        (b"not xml at all", "not XML"),
        (document(("27/11/2026", {"USD": "1.0870"})), "not a date"),
        (document(("2026-11-27", {"USD": "1,0870"})), "not a decimal"),
        (document(("2026-11-27", {"USD": "0"})), "positive"),
        (document(("2026-11-27", {"USD": "-1.08"})), "positive"),
        (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>',
            "DTD or entities",
        ),
    ],
)
def test_a_document_that_is_not_the_ecb_rates_is_refused(body: bytes, reason: str) -> None:
    with pytest.raises(ecb.EcbError, match=reason):
        ecb.parse(body)


def test_a_day_without_any_of_gpux_currencies_is_refused() -> None:
    with pytest.raises(ecb.EcbError, match="no rate for any"):
        ecb.rates_of(ecb.parse(document(("2026-11-27", {"JPY": "163.42"}))))


@given(
    st.decimals(min_value=Decimal("0.0001"), max_value=Decimal("100000"), places=5, allow_nan=False)
)
def test_the_inverse_is_within_half_a_unit_of_its_tenth_decimal(per_euro: Decimal) -> None:
    rate = ecb.to_reference(per_euro)
    assert rate.as_tuple().exponent == -ecb.RATE_DECIMALS
    assert abs(rate - Decimal(1) / per_euro) <= ecb.RATE_QUANTUM / 2


def test_the_inverse_is_rounded_half_to_even() -> None:
    # 1 / 4e9 = 2.5e-10 and 1 / 2e10 = 0.5e-10: exact ties at the tenth decimal.
    assert ecb.to_reference(Decimal(4_000_000_000)) == Decimal("2E-10")
    assert ecb.to_reference(Decimal("1.0870")) == Decimal("0.9199632015")
    with pytest.raises(ecb.EcbError, match="below"):
        ecb.to_reference(Decimal(20_000_000_000))  # 0.5e-10 would round to a rate of zero
