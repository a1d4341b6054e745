"""The view handlers record each party's account events, on the memory unit of work: the
buyer's orders and fills, the seller's offers, both parties' leases (not their charges), each
wallet's balance; a redelivered source event records nothing new."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.billing import BalanceChanged
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus
from gpux_contracts.orders import OrderStatus
from gpux_contracts.topics import (
    BILLING_BALANCES,
    BILLING_LEASES,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_STATUS,
    Topic,
)
from gpux_devinfra.testing.payloads import offer_status, order_status, trade_executed
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.notifications import retention
from gpux_gateway.notifications.events import AccountEvent, event_id
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler
from gpux_platform.clock import ManualClock

from ..lease_events import (
    hourly_totals,
    lease_charged,
    lease_ended,
    lease_low_balance,
    lease_noticed,
    lease_opened,
)

pytestmark = pytest.mark.unit

BUYER, SELLER = "b1", "s1"
T = AccountEventType


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="test", occurred_at=EPOCH)


async def apply(uow: MemoryGatewayUnitOfWork, topic: Topic, *events: Envelope[Any]) -> None:
    """Hand the events to the topic's handlers as one batch."""
    outcome = await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow).apply(list(events))
    assert outcome.errors == []
    assert outcome.set_aside == 0


def recorded(uow: MemoryGatewayUnitOfWork) -> list[tuple[str, AccountEventType]]:
    return [(e.account_id, e.type) for e in uow.state.account_events.values()]


def only(uow: MemoryGatewayUnitOfWork) -> AccountEvent:
    (recorded_event,) = uow.state.account_events.values()
    return recorded_event


async def test_the_buyer_hears_of_its_orders_status_and_fills() -> None:
    uow = MemoryGatewayUnitOfWork()
    status = event(order_status("o1", OrderStatus.PARTIALLY_FILLED, filled=1, remaining=1))
    trade = event(trade_executed(price="0.50", executed_at=EPOCH, order_id="o1", trade_id="t1"))
    await apply(uow, ORDERS_STATUS, status)
    await apply(uow, MARKET_TRADES, trade)
    assert recorded(uow) == [(BUYER, T.ORDER_UPDATED), (BUYER, T.ORDER_FILLED)]
    updated, filled = uow.state.account_events.values()
    assert updated.id == event_id(status.event_id, BUYER, T.ORDER_UPDATED)
    assert updated.created_at == uow.now
    assert updated.data["order_id"] == "o1"
    assert updated.data["status"] == "partially_filled"
    assert (updated.data["filled_gpus"], updated.data["remaining_gpus"]) == (1, 1)
    assert filled.data["trade_id"] == "t1"
    assert filled.data["price_per_gpu_hour"] == "0.50"


async def test_a_redelivered_event_records_nothing_new() -> None:
    uow = MemoryGatewayUnitOfWork()
    status = event(order_status("o1", OrderStatus.OPEN, remaining=2))
    await apply(uow, ORDERS_STATUS, status)
    uow.inbox.clear()  # as if the inbox had forgotten it: the stable id still holds
    await apply(uow, ORDERS_STATUS, status)
    assert recorded(uow) == [(BUYER, T.ORDER_UPDATED)]


async def test_the_seller_hears_of_its_offers_status() -> None:
    uow = MemoryGatewayUnitOfWork()
    await apply(uow, OFFERS_STATUS, event(offer_status("f1", OfferStatus.LIVE, 4)))
    assert recorded(uow) == [(SELLER, T.OFFER_UPDATED)]
    assert only(uow).data["status"] == "live"
    assert only(uow).data["remaining_gpus"] == 4


async def test_both_parties_hear_of_a_lease_but_not_of_its_charges() -> None:
    uow = MemoryGatewayUnitOfWork()
    lease = lease_opened(BUYER, SELLER, started_at=EPOCH, hours=2)
    totals = hourly_totals(EPOCH, 1)
    await apply(
        uow,
        BILLING_LEASES,
        event(lease),
        event(lease_charged(lease, totals)),
        event(lease_low_balance(lease, EPOCH + timedelta(minutes=5))),
        event(lease_noticed(lease, noticed_at=EPOCH, notice=timedelta(minutes=2))),
        event(lease_ended(lease, totals, reason=LeaseEndReason.INTERRUPTED)),
    )
    assert recorded(uow) == [
        (BUYER, T.LEASE_OPENED),
        (SELLER, T.LEASE_OPENED),
        (BUYER, T.LEASE_LOW_BALANCE),
        (BUYER, T.LEASE_INTERRUPTION_NOTICE),
        (SELLER, T.LEASE_INTERRUPTION_NOTICE),
        (BUYER, T.LEASE_ENDED),
        (SELLER, T.LEASE_ENDED),
    ]
    ended = list(uow.state.account_events.values())[-1]
    assert ended.data["lease_id"] == lease.lease_id
    assert ended.data["reason"] == "interrupted"


async def test_an_account_that_is_both_parties_hears_once() -> None:
    uow = MemoryGatewayUnitOfWork()
    await apply(uow, BILLING_LEASES, event(lease_opened(BUYER, BUYER, started_at=EPOCH)))
    assert recorded(uow) == [(BUYER, T.LEASE_OPENED)]


async def test_a_wallets_account_hears_of_its_balance() -> None:
    uow = MemoryGatewayUnitOfWork()
    balance = BalanceChanged(
        account_id=BUYER,
        currency=Currency.EUR,
        available=Decimal("12.5"),
        held=Decimal("2"),
        as_of=EPOCH,
    )
    await apply(uow, BILLING_BALANCES, event(balance))
    assert recorded(uow) == [(BUYER, T.BALANCE_UPDATED)]
    assert only(uow).data == {
        "account_id": BUYER,
        "currency": "EUR",
        "available": "12.5",
        "held": "2",
        "as_of": "2026-01-01T00:00:00Z",
    }


async def test_the_retention_deletes_the_events_past_it_only() -> None:
    clock = ManualClock(EPOCH)
    uow = MemoryGatewayUnitOfWork(clock)
    await apply(uow, ORDERS_STATUS, event(order_status("o1", OrderStatus.OPEN, remaining=1)))
    clock.advance(timedelta(days=6))
    await apply(uow, ORDERS_STATUS, event(order_status("o2", OrderStatus.OPEN, remaining=1)))
    clock.advance(timedelta(days=2))
    assert await retention.purge_once(lambda: uow, 7 * 86_400) == 1
    assert [e.data["order_id"] for e in uow.state.account_events.values()] == ["o2"]
