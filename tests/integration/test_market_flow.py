"""The market through the real chain: catalog, pricing, matching, billing and gateway.

Sellers offer, a buyer tops up and trades through the public API only: a market order
fills across the two cheapest offers at their own prices, a small fill, a re-price and a
resting bid move the best ask, and the buyer's wallet holds what the orders need.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_common.settings import GpuxSettings
from gpux_devinfra.testing.http import eventually as until
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_pricing.bootstrap import SPEC as PRICING

EUR = "/v1/prices/rtx-4090?currency=EUR"


@pytest.fixture(scope="module")
async def market(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        running(CATALOG, module_settings),
        running(PRICING, module_settings),
        running(MATCHING, module_settings, expiry_interval_s=0.2),
        running(BILLING, module_settings, dev_topups=True),
        running(GATEWAY, module_settings, anonymous_rate_limit="10000/minute") as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        yield client


async def account(client: httpx.AsyncClient, role: str) -> str:
    created = await client.post("/v1/accounts", json={"name": role, "roles": [role]})
    assert created.status_code == 201, created.text
    return str(created.json()["api_key"])


async def offer(client: httpx.AsyncClient, key: str, price: str, gpus: int) -> str:
    body = {
        "gpu": "rtx-4090",
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": "EUR",
        "tier": "on_demand",
        "billing": "hour",
    }
    made = await client.post("/v1/offers", json=body, headers={"Authorization": f"Bearer {key}"})
    assert made.status_code == 202, made.text
    offer_id = str(made.json()["id"])
    live = await until(client, f"/v1/offers/{offer_id}", lambda b: b["status"] == "live", key=key)
    assert live["status"] == "live", live
    return offer_id


async def order(client: httpx.AsyncClient, key: str, **fields: Any) -> str:
    body = {"gpu": "rtx-4090", "currency": "EUR", "tier": "on_demand", "hours": 1, **fields}
    made = await client.post("/v1/orders", json=body, headers={"Authorization": f"Bearer {key}"})
    assert made.status_code == 202, made.text
    assert made.json()["status"] == "pending_funds"
    return str(made.json()["id"])


def best(body: dict[str, Any]) -> tuple[str, int] | None:
    for item in body["items"]:
        if item["tier"] == "on_demand" and item["region"] == "*" and item["best_ask"]:
            return item["best_ask"]["price"], item["best_ask"]["gpus"]
    return None


async def test_the_market_moves_through_the_public_api(market: httpx.AsyncClient) -> None:
    client = market
    alice = await account(client, "seller")
    bob = await account(client, "seller")
    carol = await account(client, "seller")
    buyer = await account(client, "buyer")
    topup = await client.post(
        "/v1/topups",
        json={"amount": "100.00", "currency": "EUR", "provider": "dev"},
        headers={"Authorization": f"Bearer {buyer}"},
    )
    assert topup.status_code == 202, topup.text
    balances = await until(
        client,
        "/v1/accounts/me/balances",
        lambda rows: any(Decimal(r["available"]) == 100 for r in rows),
        key=buyer,
    )
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
        headers={"Authorization": f"Bearer {carol}"},
    )
    assert patched.status_code == 202
    assert best(await until(client, EUR, lambda x: best(x) == ("0.38", 3))) == ("0.38", 3)

    # A limit bid below the best ask rests, then fills when a cheaper offer arrives.
    bid = await order(client, buyer, gpus=2, type="limit", max_price_per_gpu_hour="0.20")
    rest = await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "open", key=buyer)
    assert rest["status"] == "open", rest
    cheap = {
        "gpu": "rtx-4090",
        "gpus": 2,
        "price_per_gpu_hour": "0.19",
        "currency": "EUR",
        "tier": "on_demand",
        "billing": "hour",
    }
    made = await client.post("/v1/offers", json=cheap, headers={"Authorization": f"Bearer {alice}"})
    assert made.status_code == 202
    filled = await until(client, f"/v1/orders/{bid}", lambda x: x["status"] == "filled", key=buyer)
    assert filled["status"] == "filled", filled
    assert [f["price_per_gpu_hour"] for f in filled["fills"]] == ["0.20"]  # the resting bid's price
