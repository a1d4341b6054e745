"""The market through the real chain: catalog, pricing, matching, billing and gateway.

Sellers offer, a buyer tops up and trades through the public API only: a market order
fills across the two cheapest offers at their own prices, a small fill, a re-price and a
resting bid move the best ask, and the buyer's wallet holds what the orders need.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from gpux_devinfra.testing.http import (
    account,
    auth,
    dev_top_up,
    funded_buyer,
    offer_body,
    push_offer,
)
from gpux_devinfra.testing.http import get_until as until

EUR = "/v1/prices/rtx-4090?currency=EUR"


async def offer(client: httpx.AsyncClient, key: str, price: str, gpus: int) -> str:
    offer_id = str((await push_offer(client, key, offer_body(price, "EUR", gpus)))["id"])
    live = await until(client, f"/v1/offers/{offer_id}", lambda b: b["status"] == "live", key=key)
    assert live["status"] == "live", live
    return offer_id


async def order(client: httpx.AsyncClient, key: str, **fields: Any) -> str:
    body = {"gpu": "rtx-4090", "currency": "EUR", "tier": "on_demand", "hours": 1, **fields}
    made = await client.post("/v1/orders", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    assert made.json()["status"] == "pending_funds"
    return str(made.json()["id"])


def best(body: dict[str, Any]) -> tuple[str, int] | None:
    for item in body["items"]:
        if item["tier"] == "on_demand" and item["region"] == "*" and item["best_ask"]:
            return item["best_ask"]["price"], item["best_ask"]["gpus"]
    return None


async def test_the_market_moves_through_the_public_api(chain: httpx.AsyncClient) -> None:
    client = chain
    alice = await account(client, "seller")
    bob = await account(client, "seller")
    carol = await account(client, "seller")
    buyer = await account(client, "buyer")
    balances = await dev_top_up(client, buyer, "100.00", "EUR")
    assert Decimal(balances[0]["available"]) == Decimal(100)

    await offer(client, alice, "0.30", 4)
    await offer(client, bob, "0.32", 4)
    c = await offer(client, carol, "0.40", 4)
    assert best(await until(client, EUR, lambda x: best(x) == ("0.30", 4))) == ("0.30", 4)

    # A market order for 8 fills 4 + 4 from the two cheapest offers, each at its own price.
    market_order = await order(
        client, buyer, gpus=8, type="market", max_price_per_gpu_hour="0.50", time_in_force="ioc"
    )
    done = await until(
        client,
        f"/v1/orders/{market_order}",
        lambda x: x["status"] == "filled" and len(x["fills"]) == 2,
        key=buyer,
    )
    assert done["status"] == "filled", done
    assert sorted((f["price_per_gpu_hour"], f["gpus"]) for f in done["fills"]) == [
        ("0.30", 4),
        ("0.32", 4),
    ]
    assert best(await until(client, EUR, lambda x: best(x) == ("0.40", 4))) == ("0.40", 4)

    # Partly filled: one GPU of the cheapest offer goes; the best ask keeps its price.
    small = await order(client, buyer, gpus=1, type="limit", max_price_per_gpu_hour="0.45")
    assert (
        await until(client, f"/v1/orders/{small}", lambda x: x["status"] == "filled", key=buyer)
    )["status"] == "filled"
    assert best(await until(client, EUR, lambda x: best(x) == ("0.40", 3))) == ("0.40", 3)

    # Re-priced down: the best ask follows.
    patched = await client.patch(
        f"/v1/offers/{c}",
        json={"price_per_gpu_hour": "0.38"},
        headers=auth(carol),
    )
    assert patched.status_code == 202
    assert best(await until(client, EUR, lambda x: best(x) == ("0.38", 3))) == ("0.38", 3)

    # A limit bid below the best ask rests, then fills when a cheaper offer arrives.
    bid = await order(client, buyer, gpus=2, type="limit", max_price_per_gpu_hour="0.20")
    rest = await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "open", key=buyer)
    assert rest["status"] == "open", rest
    await push_offer(client, alice, offer_body("0.19", "EUR", 2))
    filled = await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "filled", key=buyer)
    assert filled["status"] == "filled", filled
    assert [f["price_per_gpu_hour"] for f in filled["fills"]] == ["0.20"]  # the resting bid's price


async def test_a_changed_offer_shows_its_new_price_and_size_to_its_seller(
    chain: httpx.AsyncClient,
) -> None:
    # The case on an idle exchange: 0.90 x 2 re-priced to 0.85 and resized to 3.
    seller = await account(chain, "seller")
    offer_id = await offer(chain, seller, "0.90", 2)
    path = f"/v1/offers/{offer_id}"
    patched = await chain.patch(
        path, json={"price_per_gpu_hour": "0.85", "gpus": 3}, headers=auth(seller)
    )
    assert patched.status_code == 202, patched.text

    def changed(body: dict[str, Any]) -> bool:
        return Decimal(body["price_per_gpu_hour"]) == Decimal("0.85") and body["gpus"] == 3

    seen = await until(chain, path, changed, key=seller)
    assert (seen["gpus"], seen["remaining_gpus"], seen["status"]) == (3, 3, "live")
    # The book trades at the same price and size.
    mine = await until(chain, EUR, lambda x: any(_is(level, "0.85", 3) for level in _depth(x)))
    assert any(_is(level, "0.85", 3) for level in _depth(mine))


def _depth(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        level
        for item in body["items"]
        if item["tier"] == "on_demand" and item["region"] == "*"
        for level in item["depth"]
    ]


def _is(level: dict[str, Any], price: str, gpus: int) -> bool:
    return Decimal(level["price"]) == Decimal(price) and level["gpus"] == gpus


async def test_a_market_order_without_a_cap_shows_the_cap_it_was_held_at(
    chain: httpx.AsyncClient,
) -> None:
    """Billing holds a market order without a cap at the best ask plus its slippage (5 %), and
    the book fills it no dearer: the buyer sees that cap on the order once it is funded."""
    client = chain
    seller = await account(client, "seller")
    buyer = await funded_buyer(client, "100.00")
    made = await push_offer(client, seller, offer_body("0.40", "EUR", 2, gpu="h200"))
    live = await until(
        client, f"/v1/offers/{made['id']}", lambda b: b["status"] == "live", key=seller
    )
    assert live["status"] == "live", live
    body = {"gpu": "h200", "currency": "EUR", "tier": "on_demand", "hours": 1}
    placed = await client.post(
        "/v1/orders", json=body | {"gpus": 1, "type": "market"}, headers=auth(buyer)
    )
    assert placed.status_code == 202, placed.text
    assert placed.json()["max_price_per_gpu_hour"] is None
    shown = await until(
        client,
        f"/v1/orders/{placed.json()['id']}",
        lambda x: x["status"] == "filled" and x["max_price_per_gpu_hour"] is not None,
        key=buyer,
    )
    assert (shown["status"], shown["max_price_per_gpu_hour"]) == ("filled", "0.42"), shown
    assert [f["price_per_gpu_hour"] for f in shown["fills"]] == ["0.40"]
