"""A batch of trades on PostgreSQL costs the same round trips whatever its size.

Trades of every kind (hourly from their order's hold, per-second with a provisioning timeout
whose seller reported ready before the trade, from a EUR wallet, without a hold billing
knows, a buyer who cannot pay, the same trade twice) go through
``BatchHandler`` with billing's handlers and its ``prepare`` hook, as the ``market.trades``
subscriber applies them, on billing's real unit of work over one connection that counts its
round trips. Twenty trades and two hundred cost the same: the batch's reads and writes are
one statement each (one settlement for all its new leases, one count of their sellers'
reliability: the provisioning leases that open ready; the others state no timeout and are not
measured), none per trade.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.rules import Rules
from gpux_contracts.events import Envelope
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseReadyReported
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS, MARKET_TRADES, ORDERS_COMMANDS
from gpux_devinfra.testing.payloads import credit_requested, order_placed, trade_executed
from gpux_platform.clock import ManualClock

from .billing_round_trips import NOW, apply, counting, event, units

BUYERS = 20
KINDS = 5


def buyer(tag: str, i: int) -> str:
    return f"{tag}-b{i % BUYERS}"


def funded(tag: str, size: int) -> list[Envelope[Any]]:
    """The orders the trades fill (every kind but those without a hold)."""
    found = []
    for i in range(size):
        if i % KINDS in (0, 1, 2):
            wallet = Currency.EUR if i % KINDS == 2 else Currency.USD
            placed = order_placed(
                order_id=f"{tag}-{size}-o{i}",
                buyer_id=buyer(tag, i),
                gpus=2,
                price="1.00",
                wallet_currency=wallet,
            )
            found.append(event(placed))
    return found


def trades(tag: str, size: int) -> list[Envelope[Any]]:
    """``size`` trades: hourly and per-second from holds, from EUR wallets, without a hold,
    a buyer without money; and one of them again under another event id."""
    found = []
    for i in range(size):
        kind = i % KINDS
        fields: dict[str, Any] = {
            "trade_id": f"{tag}-{size}-t{i}",
            "order_id": f"{tag}-{size}-o{i}",
            "buyer_id": f"{tag}-poor" if kind == 4 else buyer(tag, i),
            "gpus": 2,
            "price": "0.90",
            "executed_at": NOW - timedelta(seconds=90),
            "billing": "second" if kind == 1 else "hour",
            "provisioning_timeout_seconds": 600 if kind == 1 else 0,
        }
        found.append(event(trade_executed(**fields)))
    found.append(event(found[0].payload))
    return found


def ready_reports(tag: str, size: int) -> list[Envelope[Any]]:
    """The sellers' ready reports of the provisioning trades, before their trades: each lease
    opens ready and counts as ready in time."""
    return [
        event(
            LeaseReadyReported(
                lease_id=f"{tag}-{size}-t{i}",
                buyer_id=buyer(tag, i),
                seller_id="s1",
                reported_at=NOW - timedelta(seconds=60),
            )
        )
        for i in range(size)
        if i % KINDS == 1
    ]


@pytest.mark.integration
async def test_a_batch_of_trades_costs_the_same_round_trips_whatever_its_size(
    billing_pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    clock, rules = ManualClock(NOW), Rules()
    real = units(billing_pool, rules, clock)
    credits = [
        event(credit_requested(buyer(tag, b), "500", currency))
        for b in range(BUYERS)
        for currency in (Currency.USD, Currency.EUR)
    ]
    await apply(real, BILLING_COMMANDS, credits)
    async with real() as uow:
        await uow.rates.record(ToReference(Currency.USD, Decimal("0.92"), NOW))
        await uow.commit()
    for size in (20, 200):
        await apply(real, ORDERS_COMMANDS, funded(tag, size))
        await apply(real, BILLING_COMMANDS, ready_reports(tag, size))
    round_trips = {}
    async with counting(billing_pool, rules, clock) as (counted_units, counted):
        for size in (20, 200):
            before = counted.round_trips
            outcome = await apply(counted_units, MARKET_TRADES, trades(tag, size))
            assert (outcome.applied, outcome.units) == (size + 1, 1)
            round_trips[size] = counted.round_trips - before
    # None per trade: the same for ten times as many (the leases' reliability counted once).
    # 19 for trades without a provisioning timeout; the provisioning ones add one statement
    # each for the kept reports taken, the leases made ready, and their reliability count.
    assert round_trips[20] == round_trips[200] <= 22, round_trips
    leases = await billing_pool.fetch(
        "SELECT end_reason, count(*) AS n FROM billing.leases WHERE id LIKE $1 || '-%'"
        " GROUP BY end_reason",
        tag,
    )
    assert {r["end_reason"]: r["n"] for r in leases} == {
        None: 4 * 220 // KINDS,
        "insufficient_funds": 220 // KINDS,
    }
    leased = await billing_pool.fetchval(
        "SELECT sum(leased_gpus) FROM billing.holds WHERE order_id LIKE $1 || '-%'", tag
    )
    assert leased == 2 * 3 * 220 // KINDS
    counted_kinds = await billing_pool.fetch(
        "SELECT kind, count(*) AS n FROM billing.reliability_counted WHERE lease_id LIKE $1 || '-%'"
        " GROUP BY kind",
        tag,
    )
    assert {r["kind"]: r["n"] for r in counted_kinds} == {"ready_in_time": 220 // KINDS}
