"""The handlers that keep the gateway's views, on the memory unit of work, a batch at a time."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseEndReason, LeaseTotals, LedgerLine, LedgerPosted
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    OfferAccepted,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawn,
)
from gpux_contracts.orders import (
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
    TradeExecuted,
)
from gpux_contracts.topics import (
    BILLING_LEASES,
    ORDERS_BOOK,
    ORDERS_STATUS,
    PRICING_OFFERS,
    Topic,
)
from gpux_devinfra.testing.payloads import (
    GPU,
    offer_status,
    offer_submitted,
    order_funded,
    order_placed,
    order_status,
    trade_executed,
)
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler, Outcome

from ..lease_events import (
    hourly_totals,
    lease_charged,
    lease_ended,
    lease_low_balance,
    lease_opened,
)

pytestmark = pytest.mark.unit

BUYER, SELLER = "b1", "s1"


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="test", occurred_at=EPOCH)


async def apply(uow: MemoryGatewayUnitOfWork, topic: Topic, *payloads: Payload) -> Outcome:
    """Hand the payloads to the topic's handlers as one batch."""
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow)
    return await batch.apply([event(p) for p in payloads])


async def stored(uow: MemoryGatewayUnitOfWork, made: OrderPlaced | OfferSubmitted) -> None:
    """An order placed or an offer submitted through the unit of work, with its account."""
    role, account_id = (
        (Role.BUYER, BUYER) if isinstance(made, OrderPlaced) else (Role.SELLER, SELLER)
    )
    async with uow:
        await uow.accounts.add(AccountRow(account_id, "acme", (role,), AccountStatus.ACTIVE, EPOCH))
        if isinstance(made, OrderPlaced):
            await uow.orders.add(made, uow.now)
        else:
            await uow.offers.add(made, uow.now)
        await uow.commit()


async def with_order(uow: MemoryGatewayUnitOfWork) -> str:
    """A buyer with one order of 4 GPUs, placed through the unit of work."""
    order = order_placed(order_id="o1", gpus=4, price="0.50", currency=Currency.EUR)
    await stored(uow, order)
    return order.order_id


def status(order_id: str, state: OrderStatus, filled: int) -> OrderStatusChanged:
    return order_status(order_id, state, filled=filled, remaining=4 - filled)


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
        trade_executed(
            trade_id=f"{order_id}:t{n}",
            order_id=order_id,
            offer_id="f1",
            gpus=n,
            price="0.40",
            currency=Currency.EUR,
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


async def test_a_market_order_without_a_cap_shows_the_cap_it_was_funded_at() -> None:
    uow = MemoryGatewayUnitOfWork()
    uncapped = order_placed(order_id="m1", gpus=2, price=None, currency=Currency.EUR)
    capped = order_placed(order_id="m2", gpus=2, price="0.70", currency=Currency.EUR)
    await stored(uow, uncapped)
    async with uow:
        await uow.orders.add(capped, uow.now)
        await uow.commit()
    held = [order_funded(o, held="1.10", cap="0.55") for o in (uncapped, capped)]
    funded = BatchHandler(ORDERS_BOOK, HANDLERS_BY_TOPIC[ORDERS_BOOK], lambda: uow)
    await funded.apply([event(h) for h in held])
    shown = {i: uow.state.orders[i].max_price_micros for i in ("m1", "m2")}
    assert shown == {"m1": 550_000, "m2": 700_000}  # the buyer's own cap is never replaced


async def test_offer_reports_show_the_last_status_of_the_sellers_own_offer() -> None:
    uow = MemoryGatewayUnitOfWork()
    await stored(uow, offer_submitted("f1", currency=Currency.EUR))
    (offers_status,) = (t for t in HANDLERS_BY_TOPIC if OfferStatusChanged in HANDLERS_BY_TOPIC[t])
    await apply(
        uow,
        offers_status,
        offer_status("f1", OfferStatus.LIVE, 4),
        offer_status("f1", OfferStatus.LIVE, 1),
        offer_status("f1", OfferStatus.WITHDRAWN, 0, seller_id="someone-else"),
    )
    row = uow.state.offers["f1"]
    assert (row.status, row.remaining_gpus) == ("live", 1)


def revision(number: int, price: str, gpus: int) -> OfferAccepted:
    body = offer_submitted("f1", price=price, gpus=gpus, currency=Currency.EUR)
    return OfferAccepted(offer=body, revision=number)


async def test_an_accepted_change_shows_from_its_revision_on() -> None:
    """A change pricing accepted (``pricing.offers``) shows in the seller's view from its
    revision on; the first revision is the offer as submitted, and a forwarded withdrawal
    waits for the book."""
    uow = MemoryGatewayUnitOfWork()
    await stored(uow, offer_submitted("f1", currency=Currency.EUR))
    withdrawn = OfferWithdrawn(offer_id="f1", seller_id=SELLER, gpu=GPU)
    outcome = await apply(
        uow,
        PRICING_OFFERS,
        revision(1, "0.40", 4),
        revision(3, "0.55", 2),
        revision(2, "0.50", 3),  # read late: older than what is shown
        withdrawn,
    )
    assert (outcome.applied, outcome.unhandled, outcome.units) == (4, 0, 1)
    row = uow.state.offers["f1"]
    assert (row.price_micros, row.gpus, row.revision) == (550_000, 2, 3)
    assert row.status == "pending"  # a forwarded withdrawal shows once the book confirms it


OPENED = lease_opened(BUYER, SELLER, started_at=EPOCH, hours=2, ends_at=None, currency=Currency.EUR)


def totals(period: int) -> LeaseTotals:
    return hourly_totals(EPOCH, period)


def lease_events() -> list[Payload]:
    """One lease's life: opened, two charges, a warning, the end."""
    return [
        OPENED,
        lease_charged(OPENED, totals(1)),
        lease_charged(OPENED, totals(2)),
        lease_low_balance(OPENED, EPOCH + timedelta(minutes=90)),
        lease_ended(OPENED, totals(2), reason=LeaseEndReason.COMPLETED),
    ]


async def test_lease_events_give_one_lease_whatever_order_they_are_read_in() -> None:
    finals = set()
    for order in itertools.permutations(lease_events()):
        uow = MemoryGatewayUnitOfWork()
        outcome = await apply(uow, BILLING_LEASES, *order)
        assert (outcome.applied, outcome.units) == (5, 1)
        row = uow.state.leases[OPENED.lease_id]
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
