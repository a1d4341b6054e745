"""The order book through the real chain: catalog, pricing, matching, billing and gateway.

Through the public API only: offers show as ask levels at ``GET /v1/orderbook/{gpu}``, a
resting limit bid as a bid level, and a fill reduces and removes them; prices show in the
currency asked for; an unknown GPU model is 404.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import httpx

from gpux_devinfra.testing.http import account, auth, funded_buyer, offer_body, push_offer
from gpux_devinfra.testing.http import get_until as until

GPU = "rtx-4090"
BOOK = f"/v1/orderbook/{GPU}?tier=on_demand&currency=EUR"
Levels = list[tuple[str, int, int]]


async def offer(client: httpx.AsyncClient, key: str, price: str, gpus: int) -> str:
    return str((await push_offer(client, key, offer_body(price, "EUR", gpus, gpu=GPU)))["id"])


async def order(client: httpx.AsyncClient, key: str, **fields: Any) -> str:
    body = {"gpu": GPU, "currency": "EUR", "tier": "on_demand", "hours": 1, **fields}
    made = await client.post("/v1/orders", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    return str(made.json()["id"])


def sides(body: dict[str, Any]) -> tuple[Levels, Levels]:
    def plain(levels: list[dict[str, Any]]) -> Levels:
        return [(level["price"], level["gpus"], level["orders"]) for level in levels]

    return plain(body.get("bids", [])), plain(body.get("asks", []))


async def book_until(client: httpx.AsyncClient, bids: Levels, asks: Levels) -> None:
    body = await until(client, BOOK, lambda b: sides(b) == (bids, asks))
    assert sides(body) == (bids, asks), body


async def test_bids_and_offers_show_as_levels_and_fills_remove_them(
    chain: httpx.AsyncClient,
) -> None:
    client = chain
    alice, bob = await account(client, "seller"), await account(client, "seller")
    buyer = await funded_buyer(client, "100.00")

    empty = await until(client, BOOK, lambda b: "bids" in b)
    assert sides(empty) == ([], [])
    assert empty["currency"] == "EUR"
    assert empty["depth"] == 20

    # Offers rest as ask levels, cheapest first, aggregated per price.
    await offer(client, alice, "0.30", 2)
    await offer(client, bob, "0.30", 3)
    await offer(client, alice, "0.45", 1)
    await book_until(client, [], [("0.30", 5, 2), ("0.45", 1, 1)])

    # A limit bid below the best ask rests as a bid level.
    bid = await order(client, buyer, gpus=2, type="limit", max_price_per_gpu_hour="0.25")
    await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "open", key=buyer)
    await book_until(client, [("0.25", 2, 1)], [("0.30", 5, 2), ("0.45", 1, 1)])

    # Shown in USD at matching's FX rates (the default rates file: 1 USD = 0.92 EUR).
    usd = (await client.get(f"/v1/orderbook/{GPU}?currency=USD")).json()
    assert usd["currency"] == "USD"
    in_usd = (Decimal("0.30") / Decimal("0.92")).quantize(Decimal("0.000001"), ROUND_HALF_EVEN)
    assert Decimal(usd["asks"][0]["price"]) == in_usd
    assert usd["asks"][0]["gpus"] == 5

    # A market order takes the 0.30 level partly: the ask level shrinks.
    taker = await order(
        client, buyer, gpus=4, type="market", max_price_per_gpu_hour="0.35", time_in_force="ioc"
    )
    await until(client, f"/v1/orders/{taker}", lambda x: x["status"] == "filled", key=buyer)
    await book_until(client, [("0.25", 2, 1)], [("0.30", 1, 1), ("0.45", 1, 1)])

    # A cheaper offer fills the resting bid: its level goes, the offer's remainder rests.
    await offer(client, bob, "0.20", 3)
    await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "filled", key=buyer)
    await book_until(client, [], [("0.20", 1, 1), ("0.30", 1, 1), ("0.45", 1, 1)])

    # The other tier's book is its own; an unknown GPU model is a 404 problem.
    other = (await client.get(f"/v1/orderbook/{GPU}?tier=interruptible")).json()
    assert sides(other) == ([], [])
    missing = await client.get("/v1/orderbook/no-such-gpu")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")
    bad_tier = await client.get(f"/v1/orderbook/{GPU}?tier=any")
    assert bad_tier.status_code == 422
