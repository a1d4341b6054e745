"""A quote as ``/v1/prices`` shows it: in the currency asked for, with its sellers' reliability
(the best ask's seller's counts and rate; per level the summed counts of its distinct sellers
and their lowest rate) as pricing published it, and nothing where nothing is counted."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from gpux_contracts.money import Currency
from gpux_contracts.prices import BestAsk, BestAskChanged, PriceLevel
from gpux_contracts.reliability import ReliabilityCounts
from gpux_gateway.market.service import price_list, price_out

AS_OF = datetime(2026, 12, 1, 12, tzinfo=UTC)


def quote(*, counted: bool) -> BestAskChanged:
    seller = ReliabilityCounts(ready_in_time=9, failed=1) if counted else None
    level = ReliabilityCounts(ready_in_time=11, failed=1, reclaimed=1) if counted else None
    return BestAskChanged(
        gpu="rtx-4090",
        tier="on_demand",
        region="*",
        best=BestAsk(
            offer_id="o1",
            price=Decimal("0.40"),
            currency=Currency.EUR,
            prices={Currency.EUR: Decimal("0.40"), Currency.USD: Decimal("0.434783")},
            gpus=2,
            seller_reliability=seller,
        ),
        depth=[
            PriceLevel(
                prices={Currency.EUR: Decimal("0.40"), Currency.USD: Decimal("0.434783")},
                gpus=7,
                reliability=level,
                min_reliability=Decimal("0.6666") if counted else None,
            ),
            PriceLevel(prices={Currency.EUR: Decimal("0.50")}, gpus=1),
        ],
        as_of=AS_OF,
    )


def test_a_quote_shows_its_sellers_counts_and_rates() -> None:
    shown = price_out(quote(counted=True), Currency.USD).model_dump(mode="json")
    assert shown["best_ask"]["price"] == "0.434783"
    assert shown["best_ask"]["seller_reliability"] == {
        "ready_in_time": 9,
        "failed": 1,
        "reclaimed": 0,
        "rate": "0.9000",
    }
    # The level without a USD rate is left out, as before.
    [level] = shown["depth"]
    assert level["reliability"] == {
        "ready_in_time": 11,
        "failed": 1,
        "reclaimed": 1,
        "rate": "0.8461",  # 11 of 13 together, rounded down
    }
    assert level["min_reliability"] == "0.6666"


def test_nothing_counted_shows_null_never_zero() -> None:
    [shown] = price_list([quote(counted=False)], Currency.EUR).model_dump(mode="json")["items"]
    assert shown["best_ask"]["seller_reliability"] is None
    assert [(lvl["reliability"], lvl["min_reliability"]) for lvl in shown["depth"]] == [
        (None, None),
        (None, None),
    ]
