"""Market data (``service.market``): best asks and FX rates, the newest per key kept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_billing.adapters.memory.unit_of_work import MemoryBillingUnitOfWork
from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderTier
from gpux_contracts.prices import BestAsk, BestAskChanged
from gpux_contracts.topics import FX_RATES, PRICING_BEST_ASKS
from gpux_platform.batches import Outcome

pytestmark = pytest.mark.unit

Run = Callable[..., Awaitable[Outcome]]
GPU = "rtx-4090"


def quote(uow: MemoryBillingUnitOfWork, usd: str | None, age_s: int = 0) -> BestAskChanged:
    best = None
    if usd is not None:
        price = Decimal(usd)
        best = BestAsk(
            offer_id="offer-1",
            price=price,
            currency=Currency.USD,
            prices={Currency.USD: price},
            gpus=1,
        )
    return BestAskChanged(
        gpu=GPU,
        tier="on_demand",
        region="*",
        best=best,
        depth=[],
        as_of=uow.now - timedelta(seconds=age_s),
    )


def rate(uow: MemoryBillingUnitOfWork, base: Currency, value: str, age_s: int = 0) -> RatePublished:
    return RatePublished(
        base=base,
        quote=Currency.EUR,
        rate=Decimal(value),
        as_of=uow.now - timedelta(seconds=age_s),
        source="test",
    )


async def test_the_newest_best_ask_is_kept_and_an_empty_book_has_none(
    run: Run, uow: MemoryBillingUnitOfWork
) -> None:
    await run(PRICING_BEST_ASKS, quote(uow, "2.00"), quote(uow, "1.00", age_s=5))
    best = await uow.best_asks.best(GPU, OrderTier.ON_DEMAND, None, Currency.USD)
    assert best == Decimal("2.00")  # the older quote came late and changed nothing
    assert await uow.best_asks.best(GPU, OrderTier.ON_DEMAND, None, Currency.EUR) is None
    await run(PRICING_BEST_ASKS, quote(uow, None))
    assert await uow.best_asks.best(GPU, OrderTier.ANY, None, Currency.USD) is None


async def test_the_newest_rate_into_the_reference_currency_is_kept(
    run: Run, uow: MemoryBillingUnitOfWork
) -> None:
    other_pair = rate(uow, Currency.USD, "1.08").model_copy(
        update={"base": Currency.EUR, "quote": Currency.USD}
    )
    await run(
        FX_RATES,
        rate(uow, Currency.USD, "0.92"),
        rate(uow, Currency.USD, "0.50", age_s=60),  # older: ignored
        rate(uow, Currency.GBP, "1.18"),
        other_pair,  # not into the reference currency: not billing's
    )
    rates = await uow.rates.all()
    assert {c: r.rate for c, r in rates.items()} == {
        Currency.USD: Decimal("0.92"),
        Currency.GBP: Decimal("1.18"),
    }
