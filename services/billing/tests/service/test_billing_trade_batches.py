"""Trades set-based per batch (``service.leases``, ``settlement.open_leases``), on memory: a
batch of trades opens the leases the same trades one per unit of work open: the same leases,
hold shares, first charges, transfers, events and event ids, and one ``balance.changed`` per
wallet for the batch."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.domain.fx import ToReference
from gpux_billing.service import leases, orders
from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency
from gpux_contracts.topics import MARKET_TRADES, ORDERS_COMMANDS
from gpux_devinfra.testing.payloads import order_placed, trade_executed

from .billing_desk import T0, Desk, batch_and_alone, envelope

pytestmark = pytest.mark.unit

USD, EUR = Currency.USD, Currency.EUR
BUYERS = ("b1", "b2", "b3", "b4")


async def open_desk() -> Desk:
    """Three buyers with money and a funded order each (b3's from its EUR wallet), USD's
    rate, and b4 with nothing."""
    desk = Desk()
    for buyer in ("b1", "b2"):
        await desk.credit(buyer, "10.00")
    await desk.credit("b3", "20.00", EUR)
    async with desk.uow:
        await desk.uow.rates.record(ToReference(USD, Decimal("0.92"), T0))
        await desk.uow.commit()
    placed = [
        order_placed(order_id="o1", buyer_id="b1", gpus=2, price="1.25"),  # holds 2.50
        order_placed(order_id="o2", buyer_id="b2", gpus=4, price="1.00"),  # holds 4.00
        order_placed(order_id="o3", buyer_id="b3", gpus=2, price="1.50", wallet_currency=EUR),
    ]
    assert (await desk.run(ORDERS_COMMANDS, *placed)).applied == 3
    return desk


def fill(trade_id: str, order_id: str, buyer: str, gpus: int, price: str, **extra: Any) -> Any:
    fields: dict[str, Any] = {"executed_at": T0, "billing": "hour"} | extra
    return envelope(
        trade_executed(
            trade_id=trade_id, order_id=order_id, buyer_id=buyer, gpus=gpus, price=price, **fields
        )
    )


def trades() -> list[Envelope[Any]]:
    """Every outcome of a trade in one batch, with duplicates."""
    first = fill("t1", "o1", "b1", 1, "1.20")  # half of o1's 2.50 held; its first hour from it
    late = T0 - timedelta(minutes=90)
    return [
        first,
        first,  # the same event again: claimed once
        fill("t1", "o1", "b1", 1, "1.20"),  # the same trade, another event id: opened once
        fill("t2", "o1", "b1", 1, "1.25"),  # the other half of o1's hold
        fill("t3", "o2", "b2", 2, "1.00", billing="second", executed_at=T0 - timedelta(seconds=90)),
        fill("t4", "o3", "b3", 2, "1.40"),  # 2.80 USD from the EUR wallet's hold, at 0.92
        fill("t5", "none-1", "b4", 1, "1.00"),  # no hold, no money: ends before its first hour
        # Traded 90 min ago for one hour: it completes at once and gives 0.40 of 2.00 back.
        fill("t6", "o2", "b2", 2, "0.80", hours=1, executed_at=late),
        fill("t7", "none-2", "b2", 1, "3.00"),  # no hold: 3.00 of b2's 6.40 available
        fill("t8", "none-3", "b2", 1, "3.40"),  # the 3.40 left, thanks to t6's release
        fill("t9", "none-4", "b2", 1, "0.01"),  # nothing left: ends for want of funds
    ]


async def state(desk: Desk) -> tuple[Any, ...]:
    funds = [await desk.funds(b, c) for b in BUYERS for c in (USD, EUR)]
    assert (await desk.uow.ledger.verify()).ok
    stored = {i: (s.lease, s.next_due_at) for i, s in desk.uow.state.leases.items()}
    return funds, dict(desk.uow.state.holds), stored


async def test_a_batch_of_trades_opens_the_leases_of_the_trades_one_by_one() -> None:
    batch, alone = await open_desk(), await open_desk()
    since, _ = await batch_and_alone(batch, alone, MARKET_TRADES, trades(), state)
    opened = [p["lease_id"] for p in batch.published("lease.opened")]
    assert opened == ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
    ended = {p["lease_id"]: p["reason"] for p in batch.published("lease.ended")}
    assert ended == {"t5": "insufficient_funds", "t6": "completed", "t9": "insufficient_funds"}
    charged = {p["lease_id"]: p["amount"] for p in batch.published("lease.charged")}
    assert charged == {"t1": "1.20", "t2": "1.25", "t3": "0.033333", "t4": "2.80"} | {
        "t6": "1.60",
        "t7": "3.00",
        "t8": "3.40",
    }
    warned = [p["lease_id"] for p in batch.published("lease.low_balance")]
    assert warned == ["t5", "t8", "t9"]
    holds = batch.uow.state.holds
    assert [holds[o].leased_gpus for o in ("o1", "o2", "o3")] == [2, 4, 2]
    assert await batch.funds("b2") == (0, 2_000_000 - 33_333)  # t3's prepayment left
    published = batch.uow.published[since:]
    balances = [m.key for m in published if m.topic.name == "billing.balances"]
    assert balances == ["b1|USD", "b2|USD", "b3|EUR"]  # b4 paid nothing
    assert batch.uow.refreshed[-1] == [("b1", USD), ("b2", USD), ("b3", EUR)]


async def test_the_same_trades_again_in_a_batch_open_nothing_new() -> None:
    desk = await open_desk()
    await desk.run(MARKET_TRADES, *trades())
    before = (len(desk.uow.published), await state(desk))
    again = trades()  # the same trades under new event ids
    outcome = await desk.run(MARKET_TRADES, *again)
    assert (outcome.applied, outcome.units) == (len({e.event_id for e in again}), 1)
    assert (len(desk.uow.published), await state(desk)) == before


async def test_an_order_funded_and_filled_in_one_unit_leases_from_its_new_hold() -> None:
    """A unit that holds an order and then opens a lease of its fill takes the share of the
    hold it placed (a handler called outside a batch reads what it needs itself)."""
    desk = await open_desk()
    placed = envelope(order_placed(order_id="o9", buyer_id="b1", gpus=1, price="2.00"))
    async with desk.uow as uow:
        await orders.on_placed(uow, placed)
        await leases.on_trade(uow, fill("t9", "o9", "b1", 1, "1.50"))
        await uow.commit()
    assert desk.uow.state.holds["o9"].leased_gpus == 1
    assert await desk.funds("b1") == (10_000_000 - 2_500_000 - 2_000_000, 2_500_000 + 500_000)
    assert [p["amount"] for p in desk.published("lease.charged")] == ["1.50"]
    assert (await desk.uow.ledger.verify()).ok
