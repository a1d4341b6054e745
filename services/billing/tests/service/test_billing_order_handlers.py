"""Holds on orders (``service.orders``): placed, cancelled, ended by the book, on memory."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.domain.fx import ToReference
from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderCancelRequested, OrderPlaced, OrderStatus, OrderStatusChanged
from gpux_contracts.topics import ORDERS_COMMANDS, ORDERS_STATUS, PRICING_BEST_ASKS
from gpux_devinfra.testing.payloads import GPU, best_ask_changed, order_placed, order_status

from .billing_desk import Desk

pytestmark = pytest.mark.unit


def order(
    order_id: str, gpus: int, price: str | None, currency: Currency = Currency.USD, **extra: Any
) -> OrderPlaced:
    return order_placed(order_id=order_id, gpus=gpus, price=price, currency=currency, **extra)


def ended(order_id: str, status: OrderStatus, filled: int) -> OrderStatusChanged:
    return order_status(order_id, status, filled=filled)


def rejections(desk: Desk) -> dict[str, dict[str, Any]]:
    found = desk.published("order.status_changed")
    return {p["order_id"]: p for p in found if p["status"] == "rejected"}


async def test_an_order_is_held_and_funded_once(desk: Desk) -> None:
    await desk.credit("b1", "10.00")
    placed = order("o1", 2, "1.25")
    outcome = await desk.run(ORDERS_COMMANDS, placed, placed)  # the same order, another command id
    assert outcome.applied == 2
    assert await desk.funds("b1") == (7_500_000, 2_500_000)
    (funded,) = desk.published("order.funded")
    assert (funded["held"], funded["held_currency"], funded["hold_id"]) == (
        "2.50",
        "USD",
        "hold:o1",
    )
    assert funded["order"]["order_id"] == "o1"
    assert [p["held"] for p in desk.published("balance.changed")][-1] == "2.50"


async def test_a_refused_hold_answers_its_order_and_the_batch_goes_on(desk: Desk) -> None:
    await desk.credit("b1", "10.00")
    batch = [order("o1", 2, "1.25"), order("o2", 4, "2.50"), order("o3", 1, "1.00")]
    outcome = await desk.run(ORDERS_COMMANDS, *batch)
    assert (outcome.applied, outcome.set_aside, outcome.units) == (3, 0, 1)
    assert await desk.funds("b1") == (6_500_000, 3_500_000)  # o1 and o3 held, o2 short by 2.50
    too_big = rejections(desk)["o2"]
    assert (too_big["reason"], too_big["shortfall"], too_big["shortfall_currency"]) == (
        "insufficient_funds",
        "2.50",
        "USD",
    )
    assert [f["order"]["order_id"] for f in desk.published("order.funded")] == ["o1", "o3"]
    assert await desk.uow.holds.get("o2") is None
    assert (await desk.uow.ledger.verify()).ok


async def test_a_market_order_without_a_cap_holds_at_the_best_ask_plus_slippage(desk: Desk) -> None:
    await desk.credit("b1", "50")
    await desk.run(ORDERS_COMMANDS, order("none", 1, None))
    assert rejections(desk)["none"]["reason"] == "no_offers"
    quotes = [
        best_ask_changed(
            {Currency.USD: usd}, desk.uow.now, tier=tier, offer_id=f"offer-{tier}", gpus=4
        )
        for tier, usd in (("on_demand", "2.00"), ("interruptible", "1.20"))
    ]
    await desk.run(PRICING_BEST_ASKS, *quotes)
    await desk.run(ORDERS_COMMANDS, order("market", 2, None))
    (funded,) = desk.published("order.funded")
    # The cheapest tier's best ask (1.20) plus 5 %: 1.26 per GPU-hour, 2 GPUs for an hour.
    assert funded["order"]["max_price_per_gpu_hour"] == "1.26"
    assert funded["held"] == "2.52"


async def test_an_order_in_another_currency_is_held_at_the_current_rate(desk: Desk) -> None:
    await desk.credit("b1", "50", Currency.EUR)
    await desk.run(ORDERS_COMMANDS, order("missing", 1, "1.00", wallet_currency=Currency.EUR))
    assert rejections(desk)["missing"]["reason"] == "fx_rate_missing"
    async with desk.uow:
        await desk.uow.rates.record(ToReference(Currency.USD, Decimal("0.92"), desk.uow.now))
        await desk.uow.rates.record(
            ToReference(Currency.GBP, Decimal("1.18"), desk.uow.now - timedelta(30))
        )
        await desk.uow.commit()
    await desk.run(ORDERS_COMMANDS, order("usd", 2, "1.50", wallet_currency=Currency.EUR))
    (funded,) = desk.published("order.funded")
    assert (funded["held"], funded["held_currency"]) == ("2.76", "EUR")  # 3.00 USD at 0.92
    assert await desk.funds("b1", Currency.EUR) == (47_240_000, 2_760_000)
    await desk.run(
        ORDERS_COMMANDS, order("gbp", 1, "1.00", Currency.GBP, wallet_currency=Currency.EUR)
    )
    assert rejections(desk)["gbp"]["reason"] == "fx_rate_stale"


async def test_a_cancel_is_forwarded_to_the_book_behind_the_order(desk: Desk) -> None:
    await desk.credit("b1", "10")
    cancel = OrderCancelRequested(order_id="o1", buyer_id="b1", gpu=GPU)
    await desk.run(ORDERS_COMMANDS, order("o1", 1, "1.00"), cancel)
    # The book's messages in the events' order; the batch's writes (ledger, balance) follow.
    batch = [(m.topic.name, m.key, m.envelope.event_type) for m in desk.uow.published[-4:]]
    assert batch == [
        ("orders.book", GPU, "order.funded"),
        ("orders.book", GPU, "order.cancel_requested"),
        ("billing.ledger", "hold:o1", "ledger.posted"),
        ("billing.balances", "b1|USD", "balance.changed"),
    ]
    assert desk.uow.published[-3].envelope.payload == cancel


async def test_a_final_status_releases_the_unfilled_share_once(desk: Desk) -> None:
    await desk.credit("b1", "10.00")
    await desk.run(ORDERS_COMMANDS, order("o1", 2, "1.25"), order("o2", 1, "1.00"))
    assert await desk.funds("b1") == (6_500_000, 3_500_000)
    # Not final, or billing's own rejection: nothing is released.
    await desk.run(ORDERS_STATUS, ended("o1", OrderStatus.PARTIALLY_FILLED, 1))
    own = wrap(ended("o2", OrderStatus.REJECTED, 0), producer="billing", occurred_at=desk.uow.now)
    await desk.run(ORDERS_STATUS, own)
    assert await desk.funds("b1") == (6_500_000, 3_500_000)
    # The book cancels o1 after 1 of its 2 GPUs filled: half its hold is released, once.
    cancelled = ended("o1", OrderStatus.CANCELLED, 1)
    await desk.run(ORDERS_STATUS, cancelled, ended("o1", OrderStatus.EXPIRED, 1))
    assert await desk.funds("b1") == (7_750_000, 2_250_000)
    await desk.run(
        ORDERS_STATUS, ended("o2", OrderStatus.EXPIRED, 0), ended("unknown", OrderStatus.EXPIRED, 0)
    )
    assert await desk.funds("b1") == (8_750_000, 1_250_000)
