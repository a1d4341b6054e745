"""A batch of placed orders on PostgreSQL costs the same round trips whatever its size.

Orders of every kind (limit, market priced at the best ask, paid from another currency's
wallet, too big for the wallet) go through ``BatchHandler`` with billing's handlers and its
``prepare`` hook, as the ``orders.commands`` subscriber applies them, on billing's real unit of
work over one connection that counts its round trips (statements, and a transaction's begin
and end). Twenty orders and two hundred cost the same: the batch's reads and writes are one
statement each, none per order.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.rules import Rules
from gpux_contracts.events import Envelope
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS, ORDERS_COMMANDS, PRICING_BEST_ASKS
from gpux_devinfra.testing.payloads import best_ask_changed, credit_requested, order_placed
from gpux_platform.clock import ManualClock

from .billing_round_trips import NOW, apply, counting, event, units

BUYERS = 20


def orders(tag: str, size: int, gpu: str) -> list[Envelope[Any]]:
    """``size`` orders of ``BUYERS`` buyers: limit, market, from EUR wallets, too big."""
    found = []
    for i in range(size):
        extra: dict[str, Any] = {"gpu": gpu}
        price: str | None = ("0.90", None, "0.90", "900")[i % 4]
        if i % 4 == 2:
            extra["wallet_currency"] = Currency.EUR
        placed = order_placed(
            order_id=f"{tag}-{size}-o{i}", buyer_id=f"{tag}-b{i % BUYERS}", price=price, **extra
        )
        found.append(event(placed))
    return found


@pytest.mark.integration
async def test_a_batch_of_orders_costs_the_same_round_trips_whatever_its_size(
    billing_pool: asyncpg.Pool,
) -> None:
    tag, gpu = new_id()[-8:].lower(), f"gpu-{new_id()[-8:].lower()}"
    clock, rules = ManualClock(NOW), Rules()
    real = units(billing_pool, rules, clock)

    credits = [
        event(credit_requested(f"{tag}-b{b}", "500", currency))
        for b in range(BUYERS)
        for currency in (Currency.USD, Currency.EUR)
    ]
    await apply(real, BILLING_COMMANDS, credits)
    quote = best_ask_changed({Currency.USD: "0.80"}, NOW, gpu=gpu, gpus=4)
    await apply(real, PRICING_BEST_ASKS, [event(quote)])
    async with real() as uow:
        await uow.rates.record(ToReference(Currency.USD, Decimal("0.92"), NOW))
        await uow.commit()
    round_trips = {}
    async with counting(billing_pool, rules, clock) as (counted_units, counted):
        for size in (20, 200):
            before = counted.round_trips
            outcome = await apply(counted_units, ORDERS_COMMANDS, orders(tag, size, gpu))
            assert (outcome.applied, outcome.units) == (size, 1)
            round_trips[size] = counted.round_trips - before
    assert round_trips[20] == round_trips[200] < 20, round_trips  # none per order
    held = await billing_pool.fetchval(
        "SELECT count(*) FROM billing.holds WHERE order_id LIKE $1 || '-%'", tag
    )
    assert held == 3 * (20 + 200) // 4  # every order but the too big ones
