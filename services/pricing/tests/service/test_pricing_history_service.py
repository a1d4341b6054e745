"""Trades on the memory unit of work: candles, the 24 h VWAP, one snapshot per book and unit."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency
from gpux_contracts.topics import MARKET_TRADES
from gpux_devinfra.testing.payloads import GPU
from gpux_platform.batches import BatchHandler, Outcome
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.domain.candles import Interval
from gpux_pricing.service import HANDLERS_BY_TOPIC

from ..history_trades import TRADES, trade

pytestmark = pytest.mark.unit


async def apply(unit: MemoryPricingUnitOfWork, *events: Envelope[Any]) -> Outcome:
    handlers = HANDLERS_BY_TOPIC[MARKET_TRADES]
    return await BatchHandler(MARKET_TRADES, handlers, lambda: unit).apply(events)


def shown(unit: MemoryPricingUnitOfWork, interval: Interval, tier: str = "on_demand") -> Any:
    assert isinstance(unit.read_models, MemoryReadModels)
    return json.loads(unit.read_models.histories[(GPU, tier, interval.value)])


def ohlc(candle: dict[str, Any], currency: str = "EUR") -> tuple[str, str, str, str, int]:
    prices = candle["prices"][currency]
    return prices["open"], prices["high"], prices["low"], prices["close"], candle["gpus"]


async def test_a_batch_of_trades_rolls_into_candles_with_one_snapshot_per_book(
    unit: MemoryPricingUnitOfWork,
) -> None:
    outcome = await apply(unit, *(trade(row) for row in TRADES))
    assert (outcome.applied, outcome.units) == (4, 1)
    assert isinstance(unit.read_models, MemoryReadModels)
    assert unit.read_models.writes == 1
    hour = shown(unit, Interval.HOUR)
    assert (hour["gpu"], hour["tier"], hour["interval"]) == (GPU, "on_demand", "1h")
    assert hour["as_of"] == "2026-11-28T10:01:10Z"
    assert [c["start"] for c in hour["candles"]] == ["2026-11-28T10:00:00Z"]
    assert ohlc(hour["candles"][0]) == ("0.368", "0.50", "0.354", "0.46", 6)
    assert hour["vwap_24h"]["EUR"] == "0.418333"
    assert ohlc(hour["candles"][0], "USD")[3] == "0.50"  # 0.46 EUR / 0.92
    minutes = shown(unit, Interval.MINUTE)["candles"]
    assert [ohlc(c) for c in minutes] == [
        ("0.368", "0.50", "0.354", "0.354", 4),
        ("0.46", "0.46", "0.46", "0.46", 2),
    ]


async def test_a_trade_again_adds_nothing_and_a_late_one_never_moves_the_close(
    unit: MemoryPricingUnitOfWork,
) -> None:
    first = [trade(row) for row in TRADES]
    await apply(unit, *first)
    before = shown(unit, Interval.HOUR)
    again = await apply(unit, first[0], trade(TRADES[0]))  # same event, same trade new event
    assert (again.duplicate, again.applied) == (1, 1)
    assert shown(unit, Interval.HOUR) == before
    late = ("t0", "0.10", Currency.EUR, 1, datetime(2026, 11, 28, 10, 0, 1, tzinfo=UTC))
    await apply(unit, trade(late))
    assert ohlc(shown(unit, Interval.HOUR)["candles"][0]) == ("0.368", "0.50", "0.10", "0.46", 7)


async def test_a_trade_without_a_rate_is_kept_but_joins_no_candle(
    unit: MemoryPricingUnitOfWork,
) -> None:
    del unit.state.rates[Currency.GBP]
    await apply(unit, trade(TRADES[2]))
    assert unit.state.trades["t3"].price is None
    assert unit.state.candles == {}
    assert isinstance(unit.read_models, MemoryReadModels)
    assert unit.read_models.histories == {}


async def test_each_tier_is_a_book_of_its_own(unit: MemoryPricingUnitOfWork) -> None:
    marker = ("m1", "0.40", Currency.EUR, 1, TRADES[3][4])
    await apply(unit, trade(TRADES[0]), trade(marker, "interruptible"))
    assert ohlc(shown(unit, Interval.DAY, "interruptible")["candles"][0]) == ("0.40",) * 4 + (1,)
    assert shown(unit, Interval.DAY)["candles"][0]["gpus"] == 2
