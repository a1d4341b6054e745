"""Market data (``service.market``): best asks and FX rates, the newest per key kept."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderTier
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import FX_RATES, PRICING_BEST_ASKS
from gpux_devinfra.testing.payloads import GPU, best_ask_changed

from .billing_desk import Desk

pytestmark = pytest.mark.unit


def quote(desk: Desk, usd: str | None, age_s: int = 0) -> BestAskChanged:
    prices = None if usd is None else {Currency.USD: usd}
    return best_ask_changed(prices, desk.uow.now - timedelta(seconds=age_s))


def rate(desk: Desk, base: Currency, value: str, age_s: int = 0) -> RatePublished:
    return RatePublished(
        base=base,
        quote=Currency.EUR,
        rate=Decimal(value),
        as_of=desk.uow.now - timedelta(seconds=age_s),
        source="test",
    )


async def best(desk: Desk, tier: OrderTier, currency: Currency) -> Decimal | None:
    ask = (GPU, tier, None, currency)
    return (await desk.uow.best_asks.best_many([ask]))[ask]


async def test_the_newest_best_ask_is_kept_and_an_empty_book_has_none(desk: Desk) -> None:
    await desk.run(PRICING_BEST_ASKS, quote(desk, "2.00"), quote(desk, "1.00", age_s=5))
    found = await best(desk, OrderTier.ON_DEMAND, Currency.USD)
    assert found == Decimal("2.00")  # the older quote came late and changed nothing
    assert await best(desk, OrderTier.ON_DEMAND, Currency.EUR) is None
    await desk.run(PRICING_BEST_ASKS, quote(desk, None))
    assert await best(desk, OrderTier.ANY, Currency.USD) is None


async def test_the_newest_rate_into_the_reference_currency_is_kept(desk: Desk) -> None:
    other_pair = rate(desk, Currency.USD, "1.08").model_copy(
        update={"base": Currency.EUR, "quote": Currency.USD}
    )
    await desk.run(
        FX_RATES,
        rate(desk, Currency.USD, "0.92"),
        rate(desk, Currency.USD, "0.50", age_s=60),  # older: ignored
        rate(desk, Currency.GBP, "1.18"),
        other_pair,  # not into the reference currency: not billing's
    )
    rates = await desk.uow.rates.all()
    assert {c: r.rate for c, r in rates.items()} == {
        Currency.USD: Decimal("0.92"),
        Currency.GBP: Decimal("1.18"),
    }
