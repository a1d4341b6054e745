"""Pricing benchmark: rolling a batch of trades (``market.trades``) into history on PostgreSQL.

    uv run python bench/pricing_trades.py [--trades 500] [--books 10] [--db URL]

A scratch database gets pricing's migrations and a USD/EUR rate. Then ``--trades``
``trade.executed`` over ``--books`` books (GPUs by tier; in euros and dollars, every seventh
in pounds, an hour older, which have no rate here and join no candle; every fourth a few
seconds older than the one before it; every fiftieth the same trade again under another
event id) are
applied through ``gpux_platform.batches.BatchHandler`` with pricing's handlers, exactly as
the ``market.trades`` subscriber applies them: once as one batch (one unit of work), and, the
peer measured in the same run on a fresh database, one trade per unit of work (a consumer
taking one record at a time). Prints ms per trade, round trips and statements per unit and
per trade (counted by ``billing.Counting`` around the connection), and checks both runs
recorded the same trades and candles, wrote the same histories to the read models and
queued the same events. Not a timed test: it only reports.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
from batch_runs import Run, arguments, both_ways, counted_run, report, rows_by_name, scratch_name
from billing import scratch_pool

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.money import Currency
from gpux_contracts.topics import MARKET_TRADES
from gpux_devinfra.testing.payloads import trade_executed
from gpux_devinfra.testing.scratch import scratch_database
from gpux_platform.batches import BatchHandler
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.bootstrap import MIGRATIONS
from gpux_pricing.config import PricingSettings
from gpux_pricing.service import HANDLERS_BY_TOPIC
from gpux_pricing.service.market import BookCache

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
TIERS = ("on_demand", "interruptible")


def _currency(i: int) -> Currency:
    return Currency.GBP if i % 7 == 6 else (Currency.EUR, Currency.USD)[i % 2]


def _trades(n: int, books: int) -> list[Envelope[Any]]:
    """Trades over ``books`` books, some out of time order, some without a rate, some again."""
    found: list[Envelope[Any]] = []
    for i in range(n):
        if i % 50 == 49:
            found.append(wrap(found[-7].payload, producer="matching", occurred_at=T0))
            continue
        book = i % books
        at = T0 - timedelta(minutes=30) + timedelta(seconds=2 * i - 5 * (i % 4 == 3))
        if _currency(i) is Currency.GBP:
            # An hour older: a book's newest trade shows in its history's as_of, but a trade
            # without a rate marks no book, so as the newest it would show only where a
            # priced trade of the same unit rewrites the history (the same today).
            at -= timedelta(hours=1)
        payload = trade_executed(
            trade_id=f"trade-{i:06d}",
            gpu=f"gpu-{book // len(TIERS):03d}",
            tier=TIERS[book % len(TIERS)],
            price=f"0.{40 + i % 37:02d}",
            gpus=1 + i % 4,
            currency=_currency(i),
            executed_at=at,
        )
        found.append(wrap(payload, producer="matching", occurred_at=at))
    return found


async def _rate(pool: asyncpg.Pool) -> None:
    """The USD/EUR rate the trades in dollars are priced at."""
    await pool.execute(
        "INSERT INTO pricing.fx_rates (base, quote, rate, as_of) VALUES ('USD', 'EUR', $1, $2)",
        Decimal("0.92"),
        T0 - timedelta(days=1),
    )


async def _outcome(conn: asyncpg.Connection, models: MemoryReadModels) -> dict[str, Any]:
    left = await rows_by_name(
        conn,
        trades="SELECT trade_id, gpu, tier, gpus, price, executed_at FROM pricing.trades"
        " ORDER BY 1",
        candles="SELECT gpu, tier, interval, start, open, high, low, close, close_at, gpus,"
        " notional FROM pricing.candles ORDER BY 1, 2, 3, 4",
        events="SELECT topic, count(*) FROM pricing.outbox GROUP BY 1 ORDER BY 1",
    )
    return {**left, "histories": dict(models.histories)}


async def _measure(url: str, events: Sequence[Envelope[Any]], per: int) -> Run:
    """Apply ``events`` in batches of ``per`` on a fresh database; counted, and what the
    database and the read models hold after them."""
    async with (
        scratch_database(url, scratch_name("pricing_trades")) as database_url,
        scratch_pool(database_url, "pricing", MIGRATIONS) as pool,
    ):
        await _rate(pool)
        clock, cache, models = ManualClock(T0), BookCache(), MemoryReadModels()
        band_for = PricingSettings().band_for

        def handler(one: asyncpg.Pool) -> BatchHandler[PostgresPricingUnitOfWork]:
            return BatchHandler(
                MARKET_TRADES,
                HANDLERS_BY_TOPIC[MARKET_TRADES],
                lambda: PostgresPricingUnitOfWork(
                    one, cache=cache, read_models=models, clock=clock, band_for=band_for
                ),
            )

        async with pool.acquire() as raw:
            return await counted_run(raw, handler, events, per, lambda: _outcome(raw, models))


async def main() -> None:
    args = arguments(__doc__, trades=500, books=10)
    logging.getLogger("gpux.pricing.history").setLevel(logging.ERROR)  # the pounds, expected
    trades = _trades(args.trades, args.books)
    batched, single = await both_ways(trades, lambda per: _measure(args.db, trades, per))
    checked = f"{args.books} books; same trades, candles, histories and events"
    report("trade", batched, single, checked)


if __name__ == "__main__":
    asyncio.run(main())
