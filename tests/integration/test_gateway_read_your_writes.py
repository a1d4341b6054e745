"""Read-your-writes through the real chain: after a 202, the account's own GET of that offer
or order shows its state at once, then each change as soon as the owning service confirmed
it (a re-price once pricing accepted it, fills once the book made them), while other
accounts read hard, and never a state older than one the account already saw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from decimal import Decimal
from typing import Any

import httpx

from gpux_devinfra.testing.http import account, auth, dev_top_up, offer_body, push_offer
from gpux_devinfra.testing.waiting import eventually

OFFER_RANK = {"pending": 0, "accepted": 1, "live": 2}
"""How far an open offer got; a closed one is further than any (3)."""
ORDER_RANK = {"pending_funds": 0, "open": 1, "partially_filled": 2}
"""How far an order got; an ended one is further than any (3)."""
READERS = 10


@contextlib.asynccontextmanager
async def readers(client: httpx.AsyncClient) -> AsyncIterator[list[int]]:
    """Accounts of their own reading their orders and offers in a loop until the block ends;
    yields the count of answers (each must be 200)."""
    keys = [await account(client, role) for role in ("buyer", "seller") * (READERS // 2)]
    answered = [0]
    stop = asyncio.Event()

    async def read(key: str, path: str) -> None:
        while not stop.is_set():
            response = await client.get(path, headers=auth(key))
            assert response.status_code == 200, response.text
            answered[0] += 1
            await asyncio.sleep(0.1)  # 10/s: within each key's rate limit

    paths = ("/v1/orders", "/v1/offers")
    tasks = [asyncio.create_task(read(k, paths[i % 2])) for i, k in enumerate(keys)]
    try:
        yield answered
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def follow(
    client: httpx.AsyncClient, path: str, key: str, done: Callable[[Any], bool]
) -> list[dict[str, Any]]:
    """Every body ``GET path`` answered ``key`` with, until ``done(body)``."""
    seen: list[dict[str, Any]] = []

    async def probe() -> dict[str, Any]:
        response = await client.get(path, headers=auth(key))
        assert response.status_code == 200, response.text
        seen.append(response.json())
        return seen[-1]

    await eventually(probe, done, what=f"GET {path}", timeout_s=30, interval_s=0.1)
    return seen


def never_back(seen: list[dict[str, Any]], rank: dict[str, int]) -> None:
    """The statuses seen only went forward; once closed, they did not change."""
    ranks = [rank.get(body["status"], 3) for body in seen]
    assert ranks == sorted(ranks), [body["status"] for body in seen]
    closed = [body["status"] for body in seen if body["status"] not in rank]
    assert len(set(closed)) <= 1, closed


async def test_a_sellers_own_view_shows_its_offer_and_re_price_and_never_goes_back(
    chain: httpx.AsyncClient,
) -> None:
    seller = await account(chain, "seller")
    made = await push_offer(chain, seller, offer_body("0.30", "EUR", 4))
    path = f"/v1/offers/{made['id']}"
    at_once = (await chain.get(path, headers=auth(seller))).json()
    assert (at_once["status"], Decimal(at_once["price_per_gpu_hour"])) == (
        "pending",
        Decimal("0.3"),
    )
    async with readers(chain) as answered:
        seen = await follow(chain, path, seller, lambda body: body["status"] == "live")
        patched = await chain.patch(path, json={"price_per_gpu_hour": "0.25"}, headers=auth(seller))
        assert patched.status_code == 202, patched.text
        seen += await follow(
            chain, path, seller, lambda body: Decimal(body["price_per_gpu_hour"]) == Decimal("0.25")
        )
    assert answered[0] > 0
    never_back([at_once, *seen], OFFER_RANK)
    prices = [Decimal(body["price_per_gpu_hour"]) for body in seen]
    first_new = prices.index(Decimal("0.25"))
    assert set(prices[first_new:]) == {Decimal("0.25")}  # the old price never came back
    assert seen[-1]["status"] == "live"  # the re-price left it live


async def test_a_buyers_own_view_shows_its_order_and_fills_and_never_goes_back(
    chain: httpx.AsyncClient,
) -> None:
    seller = await account(chain, "seller")
    await push_offer(chain, seller, offer_body("0.30", "EUR", 4))
    buyer = await account(chain, "buyer")
    await dev_top_up(chain, buyer, "10.00", "EUR")
    body = {
        "gpu": "rtx-4090",
        "gpus": 2,
        "type": "limit",
        "max_price_per_gpu_hour": "0.50",
        "currency": "EUR",
        "tier": "on_demand",
        "hours": 1,
    }
    async with readers(chain) as answered:
        made = await chain.post("/v1/orders", json=body, headers=auth(buyer))
        assert made.status_code == 202, made.text
        path = f"/v1/orders/{made.json()['id']}"
        at_once = (await chain.get(path, headers=auth(buyer))).json()
        assert at_once["status"] == "pending_funds"
        seen = await follow(
            chain, path, buyer, lambda b: b["status"] == "filled" and len(b["fills"]) == 1
        )
    assert answered[0] > 0
    never_back([at_once, *seen], ORDER_RANK)
    filled = [b["filled_gpus"] for b in seen]
    assert filled == sorted(filled)
    assert [len(b["fills"]) for b in seen] == sorted(len(b["fills"]) for b in seen)
