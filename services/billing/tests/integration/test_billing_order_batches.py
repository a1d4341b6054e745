"""A batch of placed orders on PostgreSQL costs the same round trips whatever its size.

Orders of every kind (limit, market priced at the best ask, paid from another currency's
wallet, too big for the wallet) go through ``BatchHandler`` with billing's handlers and its
``prepare`` hook, as the ``orders.commands`` subscriber applies them, on billing's real unit of
work over one connection that counts its round trips (statements, and a transaction's begin
and end). Twenty orders and two hundred cost the same: the batch's reads and writes are one
statement each, none per order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import asyncpg
import pytest

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC, prepare
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS, ORDERS_COMMANDS, PRICING_BEST_ASKS, Topic
from gpux_devinfra.testing.payloads import best_ask_changed, credit_requested, order_placed
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
BUYERS = 20


@dataclass
class Counted:
    """A connection that counts its round trips; everything else goes to the real one."""

    conn: asyncpg.Connection
    round_trips: int = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.conn, name)
        if name in ("execute", "executemany", "fetch", "fetchrow", "fetchval"):
            self.round_trips += 1
        elif name == "transaction":
            self.round_trips += 2  # its begin (or savepoint) and its end
        return found


@dataclass
class OneConnection:
    """A pool of one counted connection, for the unit of work (which acquires its own)."""

    conn: Counted

    async def acquire(self) -> Counted:
        return self.conn

    async def release(self, conn: Counted) -> None:
        pass


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="gateway", occurred_at=NOW)


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


async def apply(unit_of_work: Any, topic: Topic, events: Sequence[Envelope[Any]]) -> Outcome:
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], unit_of_work, prepare=prepare)
    return await batch.apply(events)


@pytest.mark.integration
async def test_a_batch_of_orders_costs_the_same_round_trips_whatever_its_size(
    billing_pool: asyncpg.Pool,
) -> None:
    tag, gpu = new_id()[-8:].lower(), f"gpu-{new_id()[-8:].lower()}"
    clock, rules = ManualClock(NOW), Rules()

    def real() -> PostgresBillingUnitOfWork:
        return PostgresBillingUnitOfWork(billing_pool, rules=rules, clock=clock)

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
    async with billing_pool.acquire() as raw:
        counted = Counted(raw)
        pool = cast(asyncpg.Pool, OneConnection(counted))

        def counting() -> PostgresBillingUnitOfWork:
            return PostgresBillingUnitOfWork(pool, rules=rules, clock=clock)

        for size in (20, 200):
            before = counted.round_trips
            outcome = await apply(counting, ORDERS_COMMANDS, orders(tag, size, gpu))
            assert (outcome.applied, outcome.units) == (size, 1)
            round_trips[size] = counted.round_trips - before
    assert round_trips[20] == round_trips[200] < 20, round_trips  # none per order
    held = await billing_pool.fetchval(
        "SELECT count(*) FROM billing.holds WHERE order_id LIKE $1 || '-%'", tag
    )
    assert held == 3 * (20 + 200) // 4  # every order but the too big ones
