"""A batch of trades on PostgreSQL costs the same round trips whatever its size.

Trades of two books, in and out of time order, in euros and dollars, in pounds (no rate
here: recorded, in no candle) and the same trade again under another event id go through
``BatchHandler`` with pricing's handlers, as the ``market.trades`` subscriber applies them,
on pricing's real unit of work over one connection that counts its round trips. Twenty
trades and two hundred cost the same: the unit records them in one statement, rolls their
candles in one and reads the books' snapshots in two, none per trade.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import MARKET_TRADES
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.payloads import trade_executed
from gpux_platform.clock import ManualClock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import MIGRATIONS
from gpux_pricing.domain.fx import Rate

from .pricing_round_trips import apply, counting, units

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
CURRENCIES = (Currency.EUR, Currency.USD, Currency.GBP)


@pytest.fixture
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, "pricing", MIGRATIONS) as pool:
        yield pool


def trades(tag: str, size: int) -> list[Envelope[Any]]:
    """``size`` trades of two books, every third a second older than the one before it; and
    one of them again under another event id."""
    found = []
    for i in range(size):
        at = NOW - timedelta(minutes=10) + timedelta(seconds=i - 2 * (i % 3 == 2))
        payload = trade_executed(
            trade_id=f"{tag}-{size}-t{i}",
            price=f"0.{40 + i % 17}",
            gpus=1 + i % 3,
            currency=CURRENCIES[i % 3],
            tier=("on_demand", "interruptible")[i % 2],
            gpu=f"{tag}-gpu",
            executed_at=at,
        )
        found.append(wrap(payload, producer="matching", occurred_at=at))
    found.append(wrap(found[0].payload, producer="matching", occurred_at=NOW))
    return found


async def test_a_batch_of_trades_costs_the_same_round_trips_whatever_its_size(
    pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    clock = ManualClock(NOW)
    async with units(pool, clock)() as uow:
        await uow.rates.upsert(Rate(Currency.USD, Currency.EUR, Decimal("0.92"), NOW))
        await uow.commit()
    round_trips = {}
    async with counting(pool, clock) as (counted_units, counted):
        for size in (20, 200):
            before = counted.round_trips
            outcome = await apply(counted_units, MARKET_TRADES, trades(tag, size))
            assert (outcome.applied, outcome.units) == (size + 1, 1)
            round_trips[size] = counted.round_trips - before
    assert round_trips[20] == round_trips[200] < 15, round_trips  # none per trade
    recorded = await pool.fetchrow(
        "SELECT count(*) AS n, count(price) AS priced FROM pricing.trades WHERE gpu = $1",
        f"{tag}-gpu",
    )
    priced = [i for size in (20, 200) for i in range(size) if CURRENCIES[i % 3] != Currency.GBP]
    assert (recorded["n"], recorded["priced"]) == (220, len(priced))
    volume = await pool.fetchval(
        "SELECT sum(gpus) FROM pricing.candles WHERE gpu = $1 AND interval = '1d'", f"{tag}-gpu"
    )
    assert volume == sum(1 + i % 3 for i in priced)
