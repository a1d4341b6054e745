"""The handlers that keep the gateway's views, on the memory unit of work, a batch at a time."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseEndReason,
    LeaseLowBalance,
    LeaseOpened,
    LeaseTotals,
    LedgerLine,
    LedgerPosted,
)
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    Tier,
)
from gpux_contracts.orders import (
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
    OrderTier,
    OrderType,
    TimeInForce,
    TradeExecuted,
)
from gpux_contracts.topics import BILLING_LEASES, ORDERS_STATUS, Topic
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler, Outcome

pytestmark = pytest.mark.unit

BUYER, SELLER = "buyer-1", "seller-1"


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="test", occurred_at=EPOCH)


async def apply(uow: MemoryGatewayUnitOfWork, topic: Topic, *payloads: Payload) -> Outcome:
    """Hand the payloads to the topic's handlers as one batch."""
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow)
    return await batch.apply([event(p) for p in payloads])


async def with_order(uow: MemoryGatewayUnitOfWork) -> str:
    """A buyer with one order of 4 GPUs, placed through the unit of work."""
    async with uow:
        await uow.accounts.add(AccountRow(BUYER, "b", (Role.BUYER,), AccountStatus.ACTIVE, EPOCH))
        order = OrderPlaced(
            order_id="o1",
            buyer_id=BUYER,
            gpu="rtx-4090",
            gpus=4,
            type=OrderType.LIMIT,
            max_price_per_gpu_hour=Decimal("0.50"),
            currency=Currency.EUR,
            tier=OrderTier.ANY,
            time_in_force=TimeInForce.GTC,
        )
        await uow.orders.add(order, uow.now)
        await uow.commit()
    return order.order_id


def status(order_id: str, state: OrderStatus, filled: int) -> OrderStatusChanged:
    return OrderStatusChanged(
        order_id=order_id,
        buyer_id=BUYER,
        gpu="rtx-4090",
        status=state,
        filled_gpus=filled,
        remaining_gpus=4 - filled,
    )


async def test_a_batch_of_order_reports_is_one_unit_and_the_newest_stays() -> None:
    uow = MemoryGatewayUnitOfWork()
    order_id = await with_order(uow)
    before = uow.commits
    outcome = await apply(
        uow,
        ORDERS_STATUS,
        status(order_id, OrderStatus.OPEN, 0),
        status(order_id, OrderStatus.PARTIALLY_FILLED, 3),
        status(order_id, OrderStatus.PARTIALLY_FILLED, 2),  # late: fills never go down
        status(order_id, OrderStatus.FILLED, 4),
        status(order_id, OrderStatus.CANCELLED, 4),  # after the end: the end stays
    )
    assert (outcome.applied, outcome.units, uow.commits - before) == (5, 1, 1)
    row = uow.state.orders[order_id]
    assert (row.status, row.filled_gpus, row.remaining_gpus) == ("filled", 4, 0)


async def test_a_report_of_another_buyer_changes_nothing_and_a_replay_nothing_more() -> None:
    uow = MemoryGatewayUnitOfWork()
    order_id = await with_order(uow)
    stranger = status(order_id, OrderStatus.FILLED, 4).model_copy(update={"buyer_id": "other"})
    report = event(status(order_id, OrderStatus.OPEN, 0))
    batch = BatchHandler(ORDERS_STATUS, HANDLERS_BY_TOPIC[ORDERS_STATUS], lambda: uow)
    first = await batch.apply([event(stranger), report])
    again = await batch.apply([report])
    assert (first.applied, again.applied, again.duplicate) == (2, 0, 1)
    assert uow.state.orders[order_id].status == "open"


async def test_trades_become_fills_of_the_order_once() -> None:
    uow = MemoryGatewayUnitOfWork()
    order_id = await with_order(uow)
    trades = [
        TradeExecuted(
            trade_id=f"{order_id}:t{n}",
            order_id=order_id,
            offer_id="f1",
            buyer_id=BUYER,
            seller_id=SELLER,
            gpu="rtx-4090",
            tier="on_demand",
            gpus=n,
            price_per_gpu_hour=Decimal("0.40"),
            currency=Currency.EUR,
            billing="hour",
            executed_at=EPOCH + timedelta(seconds=n),
        )
        for n in (1, 2)
    ]
    (market_trades,) = (t for t in HANDLERS_BY_TOPIC if TradeExecuted in HANDLERS_BY_TOPIC[t])
    await apply(uow, market_trades, trades[0], trades[1], trades[0])
    async with uow:
        fills = await uow.orders.fills(BUYER, order_id)
    assert [(f.trade_id, f.gpus) for f in fills] == [
        (trades[0].trade_id, 1),
        (trades[1].trade_id, 2),
    ]


async def test_offer_reports_show_the_last_status_of_the_sellers_own_offer() -> None:
    uow = MemoryGatewayUnitOfWork()
    async with uow:
        await uow.accounts.add(AccountRow(SELLER, "s", (Role.SELLER,), AccountStatus.ACTIVE, EPOCH))
        submitted = OfferSubmitted(
            offer_id="f1",
            seller_id=SELLER,
            gpu="rtx-4090",
            gpus=4,
            price_per_gpu_hour=Decimal("0.40"),
            currency=Currency.EUR,
            tier=Tier.ON_DEMAND,
            billing=BillingGranularity.HOUR,
        )
        await uow.offers.add(submitted, uow.now)
        await uow.commit()
    (offers_status,) = (t for t in HANDLERS_BY_TOPIC if OfferStatusChanged in HANDLERS_BY_TOPIC[t])
    about = {"offer_id": "f1", "seller_id": SELLER, "gpu": "rtx-4090"}
    await apply(
        uow,
        offers_status,
        OfferStatusChanged(**about, status=OfferStatus.LIVE, remaining_gpus=4),
        OfferStatusChanged(**about, status=OfferStatus.LIVE, remaining_gpus=1),
        OfferStatusChanged(
            **{**about, "seller_id": "someone-else"}, status=OfferStatus.WITHDRAWN, remaining_gpus=0
        ),
    )
    row = uow.state.offers["f1"]
    assert (row.status, row.remaining_gpus) == ("live", 1)


PARTIES = {"lease_id": "o1:t1", "buyer_id": BUYER}
MONEY = {"currency": Currency.EUR, "wallet_currency": Currency.EUR}


def totals(period: int) -> LeaseTotals:
    return LeaseTotals(
        period=period,
        charged_through=EPOCH + timedelta(hours=period),
        total_charged=Decimal(period),
        total_paid=Decimal(period),
        total_fee=Decimal("0.1") * period,
        total_seller=Decimal("0.9") * period,
    )


def charged(period: int) -> LeaseCharged:
    return LeaseCharged(
        **PARTIES,
        **MONEY,
        seller_id=SELLER,
        transfer_id=f"c{period}",
        period_start=EPOCH + timedelta(hours=period - 1),
        period_end=EPOCH + timedelta(hours=period),
        amount=Decimal(1),
        paid=Decimal(1),
        fee=Decimal("0.1"),
        seller_amount=Decimal("0.9"),
        totals=totals(period),
    )


def lease_events() -> list[Payload]:
    """One lease's life: opened, two charges, a warning, the end."""
    started = EPOCH
    parties, money = PARTIES, MONEY
    return [
        LeaseOpened(
            **parties,
            **money,
            order_id="o1",
            offer_id="f1",
            seller_id=SELLER,
            gpu="rtx-4090",
            tier="on_demand",
            gpus=1,
            price_per_gpu_hour=Decimal(1),
            billing=BillingGranularity.HOUR,
            hours=2,
            started_at=started,
        ),
        charged(1),
        charged(2),
        LeaseLowBalance(
            **parties,
            wallet_currency=Currency.EUR,
            funds=Decimal(0),
            runway_seconds=0,
            as_of=started + timedelta(minutes=90),
        ),
        LeaseEnded(
            **parties,
            **money,
            seller_id=SELLER,
            reason=LeaseEndReason.COMPLETED,
            ended_at=started + timedelta(hours=2),
            unpaid=Decimal(0),
            totals=totals(2),
        ),
    ]


async def test_lease_events_give_one_lease_whatever_order_they_are_read_in() -> None:
    finals = set()
    for order in itertools.permutations(lease_events()):
        uow = MemoryGatewayUnitOfWork()
        outcome = await apply(uow, BILLING_LEASES, *order)
        assert (outcome.applied, outcome.units) == (5, 1)
        row = uow.state.leases["o1:t1"]
        finals.add((row.opened, row.status, row.period, row.total_charged_micros, row.end_reason))
        assert row.low_balance_at == EPOCH + timedelta(minutes=90)
    assert finals == {(True, "ended", 2, 2_000_000, "completed")}


async def test_posted_transfers_become_statement_lines_once() -> None:
    uow = MemoryGatewayUnitOfWork()
    (ledger,) = (t for t in HANDLERS_BY_TOPIC if LedgerPosted in HANDLERS_BY_TOPIC[t])
    posted = LedgerPosted(
        transfer_id="x1",
        kind="topup",
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        lines=[
            LedgerLine(owner=BUYER, currency=Currency.EUR, kind="available", amount=Decimal(5)),
            LedgerLine(owner="platform", currency=Currency.EUR, kind="cash", amount=Decimal(-5)),
        ],
    )
    await apply(uow, ledger, posted, posted.model_copy())
    async with uow:
        lines = await uow.ledger.page(BUYER, currency=None, before=None, limit=10)
    assert [(line.transfer_id, line.amount_micros) for line in lines] == [("x1", 5_000_000)]
