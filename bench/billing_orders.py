"""Billing benchmark: funding a batch of placed orders (``orders.commands``) on PostgreSQL.

    uv run python bench/billing_orders.py [--orders 500] [--buyers 100] [--db URL]

A scratch database gets billing's migrations; its buyers are credited in USD and EUR, the
book gets a best ask and the rates a USD/EUR rate, all through billing's own handlers. Then
``--orders`` ``order.placed`` commands (limit orders, market orders without a cap priced at the
best ask, orders paid from EUR wallets, and some too big for their wallet) are applied through
``gpux_platform.batches.BatchHandler`` with billing's handlers and ``prepare`` hook, exactly as
the ``orders.commands`` subscriber applies them: once as one batch (one unit of work), and, the
peer measured in the same run on a fresh database, one order per unit of work (a consumer
taking one record at a time). Prints ms per order, round trips and statements per batch and per
order (counted by ``billing.Counting`` around the connection), and checks both runs funded and
rejected the same orders with the same balances.
Not a timed test: it only reports.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
from batch_runs import Run, arguments, both_ways, counted_run, report, rows_by_name, scratch_name
from billing import scratch_pool

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC, prepare
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    FX_RATES,
    ORDERS_COMMANDS,
    PRICING_BEST_ASKS,
    Topic,
)
from gpux_devinfra.testing.payloads import best_ask_changed, credit_requested, order_placed
from gpux_devinfra.testing.scratch import scratch_database
from gpux_platform.batches import BatchHandler
from gpux_platform.clock import ManualClock

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def event(payload: Payload, at: datetime = T0) -> Envelope[Any]:
    """``payload`` as the gateway publishes it at ``at``."""
    return wrap(payload, producer="gateway", occurred_at=at)


def _orders(n: int, buyers: int) -> list[Envelope[Any]]:
    """Limit orders, market orders without a cap, EUR-wallet orders and too big ones."""
    found = []
    for i in range(n):
        buyer = f"buyer-{i % buyers:04d}"
        kind = i % 10
        extra: dict[str, Any] = {}
        price: str | None = "0.90"
        gpus = 1 + i % 4
        if kind in (1, 2):
            price = None  # a market order: held at the best ask plus the slippage
        elif kind == 3:
            extra["wallet_currency"] = Currency.EUR
        elif kind == 4:
            gpus = 8
            price = "900"  # more than the wallet holds: insufficient_funds
        placed = order_placed(
            order_id=f"order-{i:06d}", buyer_id=buyer, gpus=gpus, price=price, **extra
        )
        found.append(event(placed))
    return found


def batch_handler(topic: Any, unit_of_work: Any) -> BatchHandler[PostgresBillingUnitOfWork]:
    """The topic's batches applied as billing's subscriber applies them."""
    return BatchHandler(topic, HANDLERS_BY_TOPIC[topic], unit_of_work, prepare=prepare)


async def seed_buyers(unit_of_work: Any, buyers: int) -> None:
    """Buyers credited in USD and EUR, a best ask, a USD/EUR rate (billing's own handlers)."""
    credits = [
        event(credit_requested(f"buyer-{b:04d}", "40", currency))
        for b in range(buyers)
        for currency in (Currency.USD, Currency.EUR)
    ]
    await batch_handler(BILLING_COMMANDS, unit_of_work).apply(credits)
    quote = best_ask_changed({Currency.USD: "0.80"}, T0 - timedelta(seconds=5), gpus=4)
    await batch_handler(PRICING_BEST_ASKS, unit_of_work).apply([event(quote)])
    rate = RatePublished(
        base=Currency.USD, quote=Currency.EUR, rate=Decimal("0.92"), as_of=T0, source="bench"
    )
    await batch_handler(FX_RATES, unit_of_work).apply([event(rate)])


async def balances_and_events(conn: asyncpg.Connection) -> dict[str, Any]:
    """Every account's balance, and the outbox's events by topic (balances aside)."""
    return await rows_by_name(
        conn,
        balances="SELECT owner, currency, kind, balance_micros FROM billing.accounts"
        " ORDER BY 1, 2, 3",
        events="SELECT topic, count(*) AS n FROM billing.outbox WHERE topic <> 'billing.balances'"
        " GROUP BY 1 ORDER BY 1",
    )


async def _outcome(conn: asyncpg.Connection) -> dict[str, Any]:
    holds = "SELECT order_id, held_micros FROM billing.holds ORDER BY 1"
    return {**await rows_by_name(conn, holds=holds), **await balances_and_events(conn)}


Units = Callable[[], PostgresBillingUnitOfWork]


async def measure(
    url: str,
    topic: Topic,
    events: Sequence[Envelope[Any]],
    per: int,
    *,
    seed: Callable[[Units], Awaitable[None]],
    outcome: Callable[[asyncpg.Connection], Awaitable[dict[str, Any]]],
) -> Run:
    """Apply ``events`` of ``topic`` in batches of ``per`` on a fresh database, after ``seed``;
    counted, and what the database holds after them (``outcome``)."""
    name = scratch_name(topic.name.replace(".", "_"))
    async with scratch_database(url, name) as database_url, scratch_pool(database_url) as pool:
        clock = ManualClock(T0)
        rules = Rules()
        await seed(lambda: PostgresBillingUnitOfWork(pool, rules=rules, clock=clock))
        async with pool.acquire() as raw:
            return await counted_run(
                raw,
                lambda one: batch_handler(
                    topic, lambda: PostgresBillingUnitOfWork(one, rules=rules, clock=clock)
                ),
                events,
                per,
                lambda: outcome(raw),
            )


async def measure_both_ways(
    url: str,
    topic: Topic,
    events: Sequence[Envelope[Any]],
    *,
    seed: Callable[[Units], Awaitable[None]],
    outcome: Callable[[asyncpg.Connection], Awaitable[dict[str, Any]]],
) -> tuple[Run, Run]:
    """``measure`` with every event in one batch, then with one event per batch."""
    return await both_ways(
        events, functools.partial(measure, url, topic, events, seed=seed, outcome=outcome)
    )


async def main() -> None:
    args = arguments(__doc__, orders=500, buyers=100)
    orders = _orders(args.orders, args.buyers)
    batched, single = await measure_both_ways(
        args.db,
        ORDERS_COMMANDS,
        orders,
        seed=lambda units: seed_buyers(units, args.buyers),
        outcome=_outcome,
    )
    report("order", batched, single, f"{args.buyers:,} buyers; same holds, balances and events")


if __name__ == "__main__":
    asyncio.run(main())
