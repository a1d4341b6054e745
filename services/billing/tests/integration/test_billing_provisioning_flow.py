"""The lease's delivery lifecycle on the real stack: billing runs in-process (its clock 30
times the wall clock's), trades and the seller's reports go in through Kafka, and the lease's
events come out on ``billing.leases`` and ``capacity.commands``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.domain.ledger import AccountKind
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseReadyReported
from gpux_contracts.money import Currency
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
)
from gpux_devinfra.testing.kafka import published
from gpux_devinfra.testing.payloads import GPU, trade_executed
from gpux_platform.settings import GpuxSettings

from .lease_feed import balance, fast_billing, funded_order, lease_events, of_type, send

pytestmark = pytest.mark.integration

SPEED = 30


@pytest.fixture(scope="module")
async def billing(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    async with fast_billing(module_settings, SPEED) as settings:
        yield settings


async def leased(settings: GpuxSettings, timeout_s: int) -> TradeExecuted:
    """A new buyer with 10 USD, an order of 2 GPUs funded at 2.00 (4.00 held), and the trade
    of an hourly lease at 1.80 whose offer gives ``timeout_s`` to provision."""
    buyer = f"b{new_id()}"
    order_id = await funded_order(settings, buyer)
    executed = trade_executed(
        order_id=order_id,
        offer_id=new_id(),
        buyer_id=buyer,
        seller_id=f"s{new_id()}",
        gpus=2,
        price="1.80",
        executed_at=settings.clock().now(),
        provisioning_timeout_seconds=timeout_s,
    )
    await send(settings, MARKET_TRADES, GPU, executed, "matching")
    return executed


async def test_a_ready_report_through_kafka_makes_the_lease_ready_then_charged(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    executed = await leased(billing, 3600)
    events = await lease_events(billing, executed.trade_id, "lease.opened")
    (opened,) = of_type(events, "lease.opened")
    # An hour from the start, or from billing's opening of the lease a moment later.
    deadline = datetime.fromisoformat(opened["provisioning_deadline"])
    earliest = executed.executed_at + timedelta(hours=1)
    assert earliest <= deadline <= earliest + timedelta(minutes=5)
    assert of_type(events, "lease.charged") == []
    report = LeaseReadyReported(
        lease_id=executed.trade_id,
        buyer_id=executed.buyer_id,
        seller_id=executed.seller_id,
        reported_at=billing.clock().now(),
    )
    await send(billing, BILLING_COMMANDS, executed.buyer_id, report)
    events = await lease_events(billing, executed.trade_id, "lease.charged")
    kinds = [e["event_type"] for e in events]
    assert kinds == ["lease.opened", "lease.ready", "lease.charged"], kinds
    (ready,) = of_type(events, "lease.ready")
    (charge,) = of_type(events, "lease.charged")
    assert charge["period_start"] == ready["ready_at"]
    assert Decimal(charge["amount"]) == Decimal("3.6")
    held = await balance(pool, executed.buyer_id, Currency.USD, AccountKind.HELD)
    assert held == 400_000  # 4.00 held, 3.60 of it paid the first hour


async def test_a_lease_not_ready_by_its_deadline_fails_and_gives_its_gpus_back(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    executed = await leased(billing, 60)  # two wall-clock seconds
    events = await lease_events(billing, executed.trade_id, "lease.ended")
    (ended,) = of_type(events, "lease.ended")
    assert (ended["reason"], ended["failure"]) == ("failed", "provisioning_timeout")
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert of_type(events, "lease.charged") + of_type(events, "leases.settled") == []

    def release(body: dict[str, Any]) -> bool:
        return bool(body["payload"]["lease_id"] == executed.trade_id)

    (record,) = await published(billing, CAPACITY_COMMANDS, release, 0.2, 30)
    assert record.body["payload"]["reason"] == "failed"
    buyer = executed.buyer_id
    assert await balance(pool, buyer, Currency.USD, AccountKind.AVAILABLE) == 10_000_000
    assert await balance(pool, buyer, Currency.USD, AccountKind.HELD) == 0
