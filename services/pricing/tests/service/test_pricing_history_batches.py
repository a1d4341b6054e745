"""Trades set-based per unit on the memory unit of work: a batch makes what one by one makes.

The batch mixes what the one-by-one path decides trade by trade: a trade again under another
event id (in the batch and from an earlier unit), trades arriving out of time order, two
books, and a trade in a currency without a rate (recorded, in no candle).
"""

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
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.service import HANDLERS_BY_TOPIC

from ..history_trades import TRADES, trade
from .conftest import pricing_unit

pytestmark = pytest.mark.unit

LATE = ("t0", "0.10", Currency.EUR, 1, datetime(2026, 11, 28, 10, 0, 1, tzinfo=UTC))
TIE = ("t5", "0.48", Currency.EUR, 1, TRADES[3][4])  # t4's time, arriving after it
SPOT = [
    ("i1", "0.52", Currency.EUR, 2, datetime(2026, 11, 28, 10, 0, 50, tzinfo=UTC)),
    ("i0", "0.44", Currency.USD, 1, datetime(2026, 11, 28, 10, 0, 10, tzinfo=UTC)),  # older
]


def batch() -> list[Envelope[Any]]:
    """The batch in arrival order: t4 before older trades, t1 (an earlier unit's) and t2
    again, t3 in pounds (no rate here), a second book."""
    t1, t2, t3, t4 = TRADES
    rows = [t2, t4, SPOT[0], t1, t3, LATE, SPOT[1], TIE, t2]
    return [trade(row, "interruptible" if row in SPOT else "on_demand") for row in rows]


async def apply(unit: MemoryPricingUnitOfWork, events: list[Envelope[Any]]) -> Outcome:
    handlers = HANDLERS_BY_TOPIC[MARKET_TRADES]
    return await BatchHandler(MARKET_TRADES, handlers, lambda: unit).apply(events)


def seen(unit: MemoryPricingUnitOfWork) -> tuple[Any, ...]:
    """Everything a unit leaves: the trades, the candles, the read models and the events."""
    assert isinstance(unit.read_models, MemoryReadModels)
    events = [m.envelope.payload for m in unit.published]
    return unit.state.trades, unit.state.candles, unit.read_models.histories, events


async def test_a_batch_of_trades_makes_what_they_make_one_by_one(clock: ManualClock) -> None:
    batched, each = pricing_unit(clock), pricing_unit(clock)
    earlier = trade(TRADES[0])  # t1, recorded by an earlier unit: in the batch, it adds nothing
    for unit in (batched, each):
        del unit.state.rates[Currency.GBP]
        await apply(unit, [earlier])
    events = [*batch(), trade(TRADES[1])]
    outcome = await apply(batched, events)
    assert (outcome.applied, outcome.units) == (len(events), 1)
    for event in events:
        await apply(each, [event])
    assert each.commits == len(events) + 1
    assert seen(batched) == seen(each)
    assert batched.state.trades["t3"].price is None
    assert sorted(batched.state.trades) == ["i0", "i1", "t0", "t1", "t2", "t3", "t4", "t5"]
    assert hour(batched, "on_demand") == ("0.368", "0.50", "0.10", "0.48", 7)  # t4/t5 tie
    assert hour(batched, "interruptible") == ("0.52", "0.52", "0.4048", "0.52", 3)


def hour(unit: MemoryPricingUnitOfWork, tier: str) -> tuple[str, str, str, str, int]:
    """The book's hour candle as readers see it, in EUR."""
    assert isinstance(unit.read_models, MemoryReadModels)
    (candle,) = json.loads(unit.read_models.histories[(GPU, tier, "1h")])["candles"]
    prices = candle["prices"]["EUR"]
    return prices["open"], prices["high"], prices["low"], prices["close"], candle["gpus"]
