"""Capacity through the real chain (catalog, pricing, matching, billing, gateway), public API only.

One offer of 8 GPUs with an on-demand and an interruptible price. Buyer A leases 4
interruptible, buyer B 4 on demand: nothing is free. Buyer C's on-demand order for 2 preempts
A's lease with the offer's notice; A's lease ends at ``interrupt_at``, billed exactly to it,
with its hold released, and C's lease starts then on 2 of A's GPUs (the other 2 are free
again). B stops: its 4 GPUs come back, and buyer D buys them from the same offer.

The exchange's clock runs 60 times faster than the wall clock, so the default notice of
120 s passes in 2 s of wall clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_contracts.money import accrued_micros
from gpux_devinfra.testing.http import (
    account,
    auth,
    final_order,
    funded_buyer,
    micros,
    released_wallet,
    seconds_between,
)
from gpux_devinfra.testing.http import get_until as until
from gpux_devinfra.testing.services import chain_at_speed
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

SPEED = 60
GPU = "a100-sxm-80gb"


@pytest.fixture(scope="module")
async def fast_chain(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """The whole chain in-process on a clock 60 times the wall clock; a client of the gateway."""
    chain = (CATALOG, PRICING, MATCHING, BILLING, GATEWAY)
    async with chain_at_speed(module_settings, *chain, speed=SPEED) as client:
        yield client


async def buy(
    client: httpx.AsyncClient, key: str, tier: str, gpus: int, cap: str
) -> dict[str, Any]:
    """A market order (capped), until it is final; the order."""
    body = {
        "gpu": GPU, "gpus": gpus, "type": "market", "max_price_per_gpu_hour": cap,
        "currency": "EUR", "tier": tier, "time_in_force": "ioc",
    }  # fmt: skip
    return await final_order(client, key, body)


async def only_lease(client: httpx.AsyncClient, key: str) -> dict[str, Any]:
    body = await until(client, "/v1/leases", lambda b: len(b["items"]) == 1, key=key)
    lease: dict[str, Any] = body["items"][0]
    return lease


async def offer_state(
    client: httpx.AsyncClient, key: str, offer_id: str, free: int, leased: int
) -> dict[str, Any]:
    state: dict[str, Any] = await until(
        client,
        f"/v1/offers/{offer_id}",
        lambda o: (o["remaining_gpus"], o["leased_gpus"]) == (free, leased),
        key=key,
    )
    assert state["capacity_gpus"] == 8
    return state


async def test_an_on_demand_order_preempts_and_returned_gpus_sell_again(
    fast_chain: httpx.AsyncClient,
) -> None:
    client = fast_chain
    seller = await account(client, "seller")
    body = {
        "gpu": GPU, "gpus": 8, "price_per_gpu_hour": "3.00", "currency": "EUR",
        "tier": "on_demand", "billing": "second", "interruptible_price_per_gpu_hour": "1.00",
        "provisioning_timeout_seconds": 0,
    }  # fmt: skip
    made = await client.post("/v1/offers", json=body, headers=auth(seller))
    assert made.status_code == 202, made.text
    offer_id = made.json()["id"]
    await offer_state(client, seller, offer_id, free=8, leased=0)
    a, b, c, d = [await funded_buyer(client, "500") for _ in range(4)]

    a_lease, b_lease = await one_pool_is_sold_in_both_tiers(client, a, b)
    await offer_state(client, seller, offer_id, free=0, leased=8)
    noticed = await an_on_demand_order_preempts(client, (a, a_lease), c, offer_id)
    await the_interrupted_lease_is_billed_to_interrupt_at(client, a, noticed)
    # C holds 2 of A's GPUs now; the other 2 are free again.
    await offer_state(client, seller, offer_id, free=2, leased=6)

    # B stops: its 4 GPUs come back, and D buys them from the same offer.
    stop = await client.post(f"/v1/leases/{b_lease['lease_id']}/stop", headers=auth(b))
    assert stop.status_code == 202, stop.text
    await until(
        client, f"/v1/leases/{b_lease['lease_id']}", lambda x: x["status"] == "ended", key=b
    )
    await offer_state(client, seller, offer_id, free=6, leased=2)
    d_order = await buy(client, d, "on_demand", 6, "3.50")
    assert d_order["status"] == "filled", d_order
    assert {f["offer_id"] for f in d_order["fills"]} == {offer_id}
    await offer_state(client, seller, offer_id, free=0, leased=8)


async def one_pool_is_sold_in_both_tiers(
    client: httpx.AsyncClient, a: str, b: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A leases 4 interruptible at 1.00 (per second), B 4 on demand at 3.00; their leases."""
    a_order = await buy(client, a, "interruptible", 4, "1.50")
    assert a_order["status"] == "filled", a_order
    a_lease = await only_lease(client, a)
    assert (a_lease["tier"], a_lease["gpus"], a_lease["billing"]) == ("interruptible", 4, "second")
    pending = await client.get(f"/v1/leases/{a_lease['lease_id']}/interruption", headers=auth(a))
    assert pending.status_code == 404, pending.text
    b_order = await buy(client, b, "on_demand", 4, "3.50")
    assert b_order["status"] == "filled", b_order
    return a_lease, await only_lease(client, b)


async def an_on_demand_order_preempts(
    client: httpx.AsyncClient, a: tuple[str, dict[str, Any]], c: str, offer_id: str
) -> dict[str, Any]:
    """C's on-demand order for 2 finds no free GPU within its limit: it preempts A's lease with
    at least the 120 s notice, and C's lease starts at ``interrupt_at``; A's noticed lease."""
    a_key, a_lease = a
    c_order = await buy(client, c, "on_demand", 2, "3.50")
    assert c_order["status"] == "filled", c_order
    assert [(f["offer_id"], f["gpus"], f["price_per_gpu_hour"]) for f in c_order["fills"]] == [
        (offer_id, 2, "3.00")
    ]
    noticed: dict[str, Any] = await until(
        client,
        f"/v1/leases/{a_lease['lease_id']}",
        lambda x: x["interrupt_at"] is not None,
        key=a_key,
    )
    assert noticed["interruption_cause"] == "preempted"
    notice = seconds_between(noticed["interruption_noticed_at"], noticed["interrupt_at"])
    assert notice >= 120
    c_lease = await only_lease(client, c)
    assert c_lease["started_at"] == noticed["interrupt_at"]
    assert c_lease["tier"] == "on_demand"
    return noticed


async def the_interrupted_lease_is_billed_to_interrupt_at(
    client: httpx.AsyncClient, a: str, noticed: dict[str, Any]
) -> None:
    """A's lease ends exactly at interrupt_at, billed exactly to it; its hold is released."""
    ended = await until(
        client, f"/v1/leases/{noticed['lease_id']}", lambda x: x["status"] == "ended", key=a
    )
    assert ended["end_reason"] == "interrupted"
    assert ended["ended_at"] == noticed["interrupt_at"]
    ran = seconds_between(ended["started_at"], ended["ended_at"])
    assert micros(ended["total_charged"]) == accrued_micros(micros("1.00") * 4, ran)
    eur = await released_wallet(client, a, "EUR")
    assert micros("500") - micros(eur["available"]) == micros(ended["total_paid"])
