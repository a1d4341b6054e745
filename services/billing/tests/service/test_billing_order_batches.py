"""Order funding set-based per batch (``service.orders``, ``domain.funding``), on memory: a
batch of orders and cancels, or of final statuses, has the outcomes of the same events
applied one per unit of work: the same holds, balances, answers and event ids, the book's
messages in the same order, and one ``balance.changed`` per wallet for the batch."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.domain.fx import ToReference
from gpux_billing.service import orders
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderCancelRequested, OrderStatus, OrderType
from gpux_contracts.topics import ORDERS_COMMANDS, ORDERS_STATUS, PRICING_BEST_ASKS, Topic
from gpux_devinfra.testing.payloads import GPU, best_ask_changed, order_placed, order_status

from .billing_desk import T0, Desk, batch_and_alone, envelope

pytestmark = pytest.mark.unit

USD, EUR, GBP = Currency.USD, Currency.EUR, Currency.GBP
BUYERS = ("b1", "b2", "b3", "no spaces")


def placed(order_id: str, buyer: str, gpus: int, price: str | None, **extra: Any) -> Envelope[Any]:
    return envelope(
        order_placed(order_id=order_id, buyer_id=buyer, gpus=gpus, price=price, **extra)
    )


async def open_desk(rates: str) -> Desk:
    """Buyers with money, a book with best asks for ``GPU``, and USD's rate with GBP's
    (``stale``: a month old) or without it (``missing``)."""
    desk = Desk()
    for buyer in ("b1", "b2", "b3"):
        await desk.credit(buyer, "10.00")
        await desk.credit(buyer, "20.00", EUR)
    quotes = [
        best_ask_changed({USD: usd}, T0, tier=tier, offer_id=f"offer-{tier}", gpus=4)
        for tier, usd in (("on_demand", "2.00"), ("interruptible", "1.20"))
    ]
    await desk.run(PRICING_BEST_ASKS, *quotes)
    async with desk.uow:
        await desk.uow.rates.record(ToReference(USD, Decimal("0.92"), T0))
        if rates == "stale":
            await desk.uow.rates.record(ToReference(GBP, Decimal("1.18"), T0 - timedelta(30)))
        await desk.uow.commit()
    return desk


def commands() -> list[Envelope[Any]]:
    """Every outcome of ``order.placed`` in one batch, with a duplicate and a cancel."""
    first = placed("o1", "b1", 2, "1.25")  # 2.50 of b1's 10.00
    cancel = OrderCancelRequested(order_id="o1", buyer_id="b1", gpu=GPU)
    limit_without_price = order_placed(
        order_id="o5", buyer_id="b2", gpus=1, price=None, type=OrderType.LIMIT
    )
    return [
        first,
        placed("o2", "b1", 7, "1.00"),  # 7.00 of the 7.50 left
        placed("o3", "b1", 1, "1.00"),  # 1.00 of the 0.50 left: short by 0.50
        first,  # the same command again: claimed once
        placed("o1", "b1", 2, "1.25"),  # the same order, another command id: held once
        envelope(cancel),  # behind o1's funding
        placed("o4", "b2", 2, None),  # market: 1.20 + 5 %, 2 GPUs
        envelope(limit_without_price),  # price_required
        placed("o6", "b2", 1, None, gpu="no-offers-gpu"),  # no_offers
        placed("o7", "b3", 2, "1.50", wallet_currency=EUR),  # 3.00 USD at 0.92
        placed("o8", "b3", 1, "1.00", currency=GBP, wallet_currency=EUR),  # stale or missing
        placed("o9", "b2", 1, "0"),  # amount_not_positive (the ledger's reason)
        placed("o10", "no spaces", 1, "1.00"),  # owner_invalid (the ledger's reason)
        placed("o11", "b2", 40, "1.00"),  # 40.00 of 10.00 - 2.52: short by 32.52
        placed("o3", "b1", 1, "0.50"),  # o3 again, now fits exactly: 0.50 of 0.50
    ]


async def state(desk: Desk) -> tuple[Any, ...]:
    funds = [await desk.funds(b, c) for b in BUYERS for c in (USD, EUR)]
    assert (await desk.uow.ledger.verify()).ok
    return funds, dict(desk.uow.state.holds)


async def both_ways(
    batch: Desk, alone: Desk, topic: Topic, events: list[Envelope[Any]]
) -> tuple[int, int]:
    """Apply ``events`` as one batch to ``batch`` and one by one to ``alone``; both end
    alike. Returns where each desk's new events begin."""
    return await batch_and_alone(batch, alone, topic, events, state)


def rejected(desk: Desk) -> dict[str, tuple[str, str | None]]:
    found = desk.published("order.status_changed")
    return {p["order_id"]: (p["reason"], p["shortfall"]) for p in found}


@pytest.mark.parametrize("rates", ["stale", "missing"])
async def test_a_mixed_batch_of_orders_ends_as_the_orders_one_by_one(rates: str) -> None:
    batch, alone = await open_desk(rates), await open_desk(rates)
    since, _ = await both_ways(batch, alone, ORDERS_COMMANDS, commands())
    assert rejected(batch) == {
        "o3": ("insufficient_funds", "0.50"),
        "o5": ("price_required", None),
        "o6": ("no_offers", None),
        "o8": (f"fx_rate_{rates}", None),
        "o9": ("amount_not_positive", None),
        "o10": ("owner_invalid", None),
        "o11": ("insufficient_funds", "32.52"),
    }
    funded = {p["order"]["order_id"]: p["held"] for p in batch.published("order.funded")}
    assert funded == {"o1": "2.50", "o2": "7.00", "o4": "2.52", "o7": "2.76", "o3": "0.50"}
    assert await batch.funds("b1") == (0, 10_000_000)
    published = batch.uow.published[since:]
    book = [m.envelope.event_type for m in published if m.topic.name == "orders.book"]
    assert book[:3] == ["order.funded", "order.funded", "order.cancel_requested"]  # o1, o2
    # One balance event per wallet the batch changed, after the batch's answers.
    balances = [m.key for m in published if m.topic.name == "billing.balances"]
    assert balances == ["b1|USD", "b2|USD", "b3|EUR"]
    assert published[-1].topic.name == "billing.balances"
    assert batch.uow.refreshed[-1] == [("b1", USD), ("b2", USD), ("b3", EUR)]


async def test_a_batch_of_final_statuses_releases_as_one_by_one() -> None:
    batch, alone = await open_desk("stale"), await open_desk("stale")
    orders = [placed("o1", "b1", 2, "1.25"), placed("o2", "b1", 1, "1.00")]
    orders.append(placed("o3", "b2", 4, "1.00"))
    await both_ways(batch, alone, ORDERS_COMMANDS, orders)
    own = envelope(order_status("o3", OrderStatus.REJECTED), producer="billing")
    statuses: list[Payload | Envelope[Any]] = [
        order_status("o1", OrderStatus.PARTIALLY_FILLED, filled=1),  # not final
        order_status("o1", OrderStatus.CANCELLED, filled=1),  # half of 2.50 back
        order_status("o1", OrderStatus.EXPIRED, filled=1),  # released already
        own,  # billing's own rejection releases nothing
        order_status("o2", OrderStatus.EXPIRED),  # all of 1.00 back
        order_status("o3", OrderStatus.CANCELLED, filled=4, buyer_id="b2"),  # all filled
        order_status("unknown", OrderStatus.EXPIRED),  # never funded
    ]
    events = [s if isinstance(s, Envelope) else envelope(s) for s in statuses]
    since, _ = await both_ways(batch, alone, ORDERS_STATUS, events)
    assert await batch.funds("b1") == (8_750_000, 1_250_000)
    assert await batch.funds("b2") == (6_000_000, 4_000_000)
    kinds = [m.envelope.event_type for m in batch.uow.published[since:]]
    assert kinds == ["ledger.posted", "ledger.posted", "balance.changed"]
    assert batch.uow.state.holds["o1"].released_micros == 1_250_000


async def test_orders_and_a_release_in_one_unit_see_each_other() -> None:
    """A unit that holds, releases and holds again decides each against what the one before
    left (a handler called outside a batch reads what it needs itself)."""
    desk = await open_desk("stale")
    events = [
        placed("o1", "b1", 10, "1.00"),
        envelope(order_status("o1", OrderStatus.CANCELLED)),
        placed("o2", "b1", 10, "1.00"),
    ]
    async with desk.uow as uow:
        await orders.on_placed(uow, events[0])
        await orders.on_status_changed(uow, events[1])
        await orders.on_placed(uow, events[2])
        await uow.commit()
    assert await desk.funds("b1") == (0, 10_000_000)
    assert [p["order"]["order_id"] for p in desk.published("order.funded")] == ["o1", "o2"]
    assert (await desk.uow.ledger.verify()).ok
