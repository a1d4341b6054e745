"""Buyers' orders: placed as commands on orders.commands, status applied from orders.status."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from gpux_contracts.events import Payload, wrap
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderStatus, OrderStatusChanged, TradeExecuted
from gpux_contracts.topics import MARKET_TRADES, ORDERS_COMMANDS, ORDERS_STATUS, Topic
from gpux_platform.broker import Outgoing, make_broker, publish_many

from .conftest import ORDER, commands_about


async def _publish(gateway: Any, topic: Topic, key: str, *payloads: Payload) -> None:
    """Publish events as the book would."""
    broker = make_broker(gateway.settings, "matching")
    await broker.start()
    try:
        now = datetime.now(UTC)
        messages = [
            Outgoing(topic, key, wrap(p, producer="matching", occurred_at=now)) for p in payloads
        ]
        await publish_many(broker, gateway.settings, messages)
    finally:
        await broker.stop()


async def _report(gateway: Any, change: OrderStatusChanged) -> None:
    """Publish an order status as the book would."""
    await _publish(gateway, ORDERS_STATUS, change.gpu, change)


async def _status_becomes(client: Any, order_id: str, status: str) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for _ in range(100):
        body = (await client.get(f"/v1/orders/{order_id}")).json()
        if body["status"] == status:
            break
        await asyncio.sleep(0.2)
    return body


async def test_a_buyer_places_an_order_and_one_command_goes_out(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        placed = await client.post("/v1/orders", json=ORDER)
        assert placed.status_code == 202, placed.text
        order = placed.json()
        one = await client.get(f"/v1/orders/{order['id']}")
        listing = await client.get("/v1/orders")
    assert order["status"] == "pending_funds"
    assert (order["gpus"], order["filled_gpus"], order["remaining_gpus"]) == (8, 0, 8)
    assert order["max_price_per_gpu_hour"] == "0.45"
    assert order["time_in_force"] == "gtc"
    assert one.json() == {**order, "fills": []}
    assert [o["id"] for o in listing.json()["items"]] == [order["id"]]
    commands = await commands_about(gateway, ORDERS_COMMANDS, "order_id", order["id"], 2.0)
    assert [c["event_type"] for c in commands] == ["order.placed"]
    payload = commands[0]["payload"]
    assert payload["buyer_id"] == buyer["id"]
    assert (payload["gpu"], payload["gpus"], payload["type"]) == ("rtx-4090", 8, "limit")


async def test_sellers_and_other_buyers_cannot_see_or_touch_orders(
    gateway: Any, sign_up: Any
) -> None:
    buyer = await sign_up(["buyer"])
    other = await sign_up(["buyer"])
    seller = await sign_up(["seller"])
    async with gateway.client(buyer["key"]) as client:
        order = (await client.post("/v1/orders", json=ORDER)).json()
    async with gateway.client(seller["key"]) as client:
        assert (await client.post("/v1/orders", json=ORDER)).status_code == 403
        assert (await client.get("/v1/orders")).status_code == 403
    async with gateway.client(other["key"]) as client:
        assert (await client.get(f"/v1/orders/{order['id']}")).status_code == 404
        assert (await client.delete(f"/v1/orders/{order['id']}")).status_code == 404
        assert (await client.get("/v1/orders")).json()["items"] == []


async def test_bad_orders_are_refused(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    no_price = {k: v for k, v in ORDER.items() if k != "max_price_per_gpu_hour"}
    bad = [
        no_price,
        {**ORDER, "time_in_force": "gtd"},
        {**ORDER, "time_in_force": "gtd", "expires_at": past},
        {**ORDER, "time_in_force": "gtc", "expires_at": future},
        {**ORDER, "max_price_per_gpu_hour": "NaN"},
        {**ORDER, "max_price_per_gpu_hour": "0.12345"},
        {**ORDER, "max_price_per_gpu_hour": "-1"},
        {**ORDER, "gpus": 0},
        {**ORDER, "gpus": 4097},
        {**ORDER, "hours": 0},
        {**ORDER, "hours": 8761},
        {**ORDER, "type": "stop"},
        {**ORDER, "currency": "JPY"},
        {**ORDER, "time_in_force": "day"},
        {**ORDER, "surprise": True},
    ]
    async with gateway.client(buyer["key"]) as client:
        for body in bad:
            response = await client.post("/v1/orders", json=body)
            assert response.status_code == 422, (body, response.text)
        market = {**no_price, "type": "market", "time_in_force": "ioc"}
        assert (await client.post("/v1/orders", json=market)).status_code == 202
        gtd = {**ORDER, "time_in_force": "gtd", "expires_at": future}
        assert (await client.post("/v1/orders", json=gtd)).status_code == 202
        assert len((await client.get("/v1/orders")).json()["items"]) == 2


def _fill_of(order: dict[str, Any], buyer_id: str) -> TradeExecuted:
    """A trade of 3 GPUs at 0.41 EUR for the order."""
    return TradeExecuted(
        trade_id=f"{order['id']}:b1",
        order_id=order["id"],
        offer_id="offer-1",
        buyer_id=buyer_id,
        seller_id="seller-1",
        gpu=order["gpu"],
        tier="on_demand",
        gpus=3,
        price_per_gpu_hour=Decimal("0.4100"),
        currency=Currency("EUR"),
        billing="hour",
        hours=24,
        executed_at=datetime.now(UTC),
    )


async def test_cancel_sends_one_command_and_status_comes_from_orders_status(
    gateway: Any, sign_up: Any
) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        order = (await client.post("/v1/orders", json=ORDER)).json()
        cancelled = await client.delete(f"/v1/orders/{order['id']}")
        assert cancelled.status_code == 202
        commands = await commands_about(gateway, ORDERS_COMMANDS, "order_id", order["id"], 2.0)
        assert [c["event_type"] for c in commands] == ["order.placed", "order.cancel_requested"]
        assert commands[1]["payload"]["buyer_id"] == buyer["id"]

        def change(status: OrderStatus, filled: int, remaining: int) -> OrderStatusChanged:
            return OrderStatusChanged(
                order_id=order["id"],
                buyer_id=buyer["id"],
                gpu=order["gpu"],
                status=status,
                filled_gpus=filled,
                remaining_gpus=remaining,
                reason="cancel_requested" if status == OrderStatus.CANCELLED else None,
            )

        trade = _fill_of(order, buyer["id"])
        await _publish(gateway, MARKET_TRADES, order["gpu"], trade, trade)  # once, though twice
        await _report(gateway, change(OrderStatus.PARTIALLY_FILLED, 3, 5))
        seen = await _status_becomes(client, order["id"], "partially_filled")
        assert (seen["filled_gpus"], seen["remaining_gpus"]) == (3, 5)
        for _ in range(50):
            if seen["fills"]:
                break
            await asyncio.sleep(0.2)
            seen = (await client.get(f"/v1/orders/{order['id']}")).json()
        assert [(f["trade_id"], f["gpus"], f["price_per_gpu_hour"]) for f in seen["fills"]] == [
            (trade.trade_id, 3, "0.41")
        ]
        await _report(gateway, change(OrderStatus.CANCELLED, 3, 0))
        seen = await _status_becomes(client, order["id"], "cancelled")
        assert (seen["status"], seen["filled_gpus"], seen["reason"]) == (
            "cancelled",
            3,
            "cancel_requested",
        )
        # An ended order stays ended, and cannot be cancelled again.
        await _report(gateway, change(OrderStatus.OPEN, 0, 8))
        await asyncio.sleep(1.0)
        assert (await client.get(f"/v1/orders/{order['id']}")).json()["status"] == "cancelled"
        again = await client.delete(f"/v1/orders/{order['id']}")
        assert again.status_code == 409
