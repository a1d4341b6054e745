"""Billing benchmark: opening the leases of a batch of trades (``market.trades``) on PostgreSQL.

    uv run python bench/billing_trades.py [--trades 500] [--buyers 100] [--db URL]

A scratch database gets billing's migrations; its buyers are credited in USD and EUR, the
rates get a USD/EUR rate and the trades' orders are funded, all through billing's own
handlers (``bench/billing_orders.py`` seeds the same way). Then ``--trades``
``trade.executed`` (hourly fills of funded orders, whose first hour is paid from the hold's
share, per-second fills, fills paid from EUR wallets, fills of orders billing holds nothing
for, and fills of a buyer without money, whose lease ends at once) are applied through
``gpux_platform.batches.BatchHandler`` with billing's handlers and ``prepare`` hook, exactly
as the ``market.trades`` subscriber applies them: once as one batch (one unit of work), and,
the peer measured in the same run on a fresh database, one trade per unit of work (a consumer
taking one record at a time). Prints ms per trade, round trips and statements per unit and
per trade (counted by ``billing.Counting`` around the connection), and checks both runs
opened the same leases with the same charges, hold shares, balances and events.
Not a timed test: it only reports.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import asyncpg
from batch_runs import arguments, report, rows_by_name
from billing_orders import (
    T0,
    Units,
    balances_and_events,
    batch_handler,
    event,
    measure_both_ways,
    seed_buyers,
)

from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency
from gpux_contracts.topics import MARKET_TRADES, ORDERS_COMMANDS
from gpux_devinfra.testing.payloads import order_placed, trade_executed

KINDS = 10


def _buyer(i: int, buyers: int) -> str:
    return "buyer-poor" if i % KINDS == 9 else f"buyer-{i % buyers:04d}"


def _funded(i: int) -> bool:
    """Whether trade ``i`` fills an order billing funded (else it holds nothing for it)."""
    return i % KINDS not in (8, 9)


def _orders(n: int, buyers: int) -> list[Envelope[Any]]:
    """The funded orders the trades fill (EUR wallets for every fifth)."""
    return [
        event(
            order_placed(
                order_id=f"order-{i:06d}",
                buyer_id=_buyer(i, buyers),
                gpus=2,
                price="0.90",
                wallet_currency=Currency.EUR if i % 5 == 2 else Currency.USD,
            )
        )
        for i in range(n)
        if _funded(i)
    ]


def _trades(n: int, buyers: int) -> list[Envelope[Any]]:
    """Hourly and per-second fills of funded orders, fills without a hold, a buyer without
    money; executed 90 s ago (a per-second lease pays its first minute at once)."""
    return [
        event(
            trade_executed(
                trade_id=f"trade-{i:06d}",
                order_id=f"order-{i:06d}",
                buyer_id=_buyer(i, buyers),
                gpus=2,
                price="0.85",
                billing="second" if i % KINDS in (1, 6) else "hour",
                executed_at=T0 - timedelta(seconds=90),
            )
        )
        for i in range(n)
    ]


async def _seed(units: Units, trades: int, buyers: int) -> None:
    """Buyers credited, a USD/EUR rate, the trades' orders funded (billing's own handlers)."""
    await seed_buyers(units, buyers)
    await batch_handler(ORDERS_COMMANDS, units).apply(_orders(trades, buyers))


async def _outcome(conn: asyncpg.Connection) -> dict[str, Any]:
    left = await rows_by_name(
        conn,
        leases="SELECT id, wallet_currency, period, charged_micros, paid_micros, held_micros,"
        " end_reason, next_due_at FROM billing.leases ORDER BY 1",
        holds="SELECT order_id, leased_gpus FROM billing.holds ORDER BY 1",
    )
    return {**left, **await balances_and_events(conn)}


async def main() -> None:
    args = arguments(__doc__, trades=500, buyers=100)
    trades = _trades(args.trades, args.buyers)
    batched, single = await measure_both_ways(
        args.db,
        MARKET_TRADES,
        trades,
        seed=lambda units: _seed(units, args.trades, args.buyers),
        outcome=_outcome,
    )
    checked = f"{args.buyers:,} buyers; same leases, holds, balances and events"
    report("trade", batched, single, checked)


if __name__ == "__main__":
    asyncio.run(main())
