"""The FX feed: the newest rate of each currency wins, and it is current once caught up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_matching.service.fx import FxFeed, fx_rates

pytestmark = pytest.mark.unit

T = datetime(2026, 3, 1, tzinfo=UTC)


def rate(value: str, at: datetime, base: Currency = Currency.USD) -> RatePublished:
    return RatePublished(base=base, quote=Currency.EUR, rate=Decimal(value), as_of=at, source="t")


def test_only_rates_quoted_in_the_reference_currency_count() -> None:
    assert fx_rates(rate("0.92", T)) == {"USD": Decimal("920000.00")}
    to_usd = RatePublished(
        base=Currency.GBP, quote=Currency.USD, rate=Decimal("1.3"), as_of=T, source="t"
    )
    assert fx_rates(to_usd) is None
    assert fx_rates(rate("1", T, base=Currency.EUR)) is None


def test_the_feed_waits_for_the_records_that_were_there_at_start() -> None:
    feed = FxFeed()
    feed.set_end(2)
    assert not feed.apply(rate("0.92", T), 0)  # an old rate may still be followed by a newer
    assert feed.apply(rate("0.93", T + timedelta(1)), 1)  # caught up: now it counts
    assert feed.rates() == {"USD": Decimal("930000.00")}


def test_the_newest_rate_wins_and_an_older_one_never_steps_back() -> None:
    feed = FxFeed()
    feed.set_end(0)
    assert feed.caught_up
    assert feed.apply(rate("0.92", T), 0)
    assert not feed.apply(rate("0.80", T - timedelta(1)), 1)
    assert not feed.apply(rate("0.92", T), 2)  # the same rate again changes nothing
    assert feed.rates() == {"USD": Decimal("920000.00")}
    assert feed.apply(rate("0.95", T), 3)  # an equal time replaces it (the shared FX rule)
    assert feed.rates() == {"USD": Decimal("950000.00")}
    assert not feed.apply(None, 4)
