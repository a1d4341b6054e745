"""Seller reliability through the real chain (catalog, pricing, matching, billing, gateway),
public API only: billing counts each lease's outcome, the sellers' offers and the prices show
the counts, and an order's ``min_reliability`` keeps it off a seller who failed its buyers.

Seller A is the cheaper; one order takes a GPU of each seller. A reports that it cannot
deliver its lease (the lease fails), B posts access to its own (the lease is ready in time).
Then an order asking for a reliability of at least 0.5 fills from B although A, with a rate
of 0, is cheaper and has a GPU free; an order without a minimum takes A's.
"""

from __future__ import annotations

from typing import Any

import httpx

from gpux_devinfra.testing import waiting
from gpux_devinfra.testing.http import (
    auth,
    book_in,
    final_order,
    funded_buyer,
    get_until,
    offer_becomes,
    offer_body,
    sell,
)

GPU = "rtx-4090"
PRICES = f"/v1/prices/{GPU}?currency=EUR"
FAILED_ONCE = {"ready_in_time": 0, "failed": 1, "reclaimed": 0, "rate": "0.0000"}
READY_ONCE = {"ready_in_time": 1, "failed": 0, "reclaimed": 0, "rate": "1.0000"}


def market(gpus: int, **extra: Any) -> dict[str, Any]:
    """A market order capped at 5.00 EUR that never rests."""
    return {
        "gpu": GPU, "gpus": gpus, "type": "market", "max_price_per_gpu_hour": "5.00",
        "currency": "EUR", "tier": "on_demand", "time_in_force": "ioc", **extra,
    }  # fmt: skip


async def offered(client: httpx.AsyncClient, price: str, gpus: int) -> dict[str, Any]:
    """A new seller's live offer whose leases wait for the seller's access (10 minutes)."""
    body = offer_body(price, "EUR", gpus, gpu=GPU, billing="second")
    offer = await sell(client, {**body, "provisioning_timeout_seconds": 600})
    await offer_becomes(client, offer, "live")
    return offer


async def lease_of(client: httpx.AsyncClient, lease_id: str, key: str, status: str) -> None:
    """Wait until the lease, as ``key``'s account sees it, has ``status``."""
    await get_until(client, f"/v1/leases/{lease_id}", lambda x: x["status"] == status, key=key)


async def test_an_order_with_a_minimum_reliability_fills_from_the_seller_who_delivers(
    chain: httpx.AsyncClient,
) -> None:
    client = chain
    cheap, reliable = await offered(client, "2.00", 1), await offered(client, "3.00", 2)
    buyer = await funded_buyer(client, "500.00")
    first = await final_order(client, buyer, market(2))
    assert first["status"] == "filled", first
    leases = {fill["offer_id"]: fill["trade_id"] for fill in first["fills"]}
    failing, ready = leases[cheap["id"]], leases[reliable["id"]]

    await lease_of(client, failing, cheap["key"], "provisioning")
    reported = await client.post(
        f"/v1/leases/{failing}/failure", json={"detail": "no machines"}, headers=auth(cheap["key"])
    )
    assert reported.status_code == 202, reported.text
    await lease_of(client, ready, reliable["key"], "provisioning")
    access = {"host": "203.0.113.7", "port": 22, "user": "ubuntu"}
    posted = await client.post(
        f"/v1/leases/{ready}/access", json=access, headers=auth(reliable["key"])
    )
    assert posted.status_code in (200, 202), posted.text
    await lease_of(client, failing, buyer, "failed")
    await lease_of(client, ready, buyer, "running")

    await _the_offers_show_both_sellers_counts(client, cheap, reliable)
    await _the_prices_show_the_sellers_counts(client, cheap)
    order = await _fills_with_a_minimum(client, buyer, "0.5", avoid=cheap["id"])
    assert [fill["offer_id"] for fill in order["fills"]] == [reliable["id"]]
    assert order["min_reliability"] == "0.5000"
    anyone = await final_order(client, buyer, market(1))
    assert [fill["offer_id"] for fill in anyone["fills"]] == [cheap["id"]]  # A is the cheaper


async def _the_offers_show_both_sellers_counts(
    client: httpx.AsyncClient, cheap: dict[str, Any], reliable: dict[str, Any]
) -> None:
    for offer, counts in ((cheap, FAILED_ONCE), (reliable, READY_ONCE)):
        await _the_offer_shows(client, offer, counts)
    # A's GPU came back when its lease failed: it is on the book again, the cheapest.
    await get_until(
        client,
        f"/v1/offers/{cheap['id']}",
        lambda o: (o["status"], o["remaining_gpus"]) == ("live", 1),
        key=cheap["key"],
    )


async def _the_offer_shows(
    client: httpx.AsyncClient, offer: dict[str, Any], counts: dict[str, Any]
) -> None:
    """The seller's one offer, listed and read, shows ``counts`` as its own and its seller's."""

    def counted(page: dict[str, Any]) -> bool:
        return [o["reliability"]["seller"] for o in page["items"]] == [counts]

    page = await get_until(client, "/v1/offers", counted, key=offer["key"])
    (shown,) = page["items"]
    assert shown["reliability"] == {"offer": counts, "seller": counts}
    one = (await client.get(f"/v1/offers/{offer['id']}", headers=auth(offer["key"]))).json()
    assert one["reliability"] == shown["reliability"]


def _counted_levels(prices: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [
        (level["price"], level.get("reliability"), level.get("min_reliability"))
        for level in book_in(prices)["depth"]
    ]


async def _the_prices_show_the_sellers_counts(
    client: httpx.AsyncClient, cheap: dict[str, Any]
) -> None:
    expected = [("2.00", FAILED_ONCE, "0.0000"), ("3.00", READY_ONCE, "1.0000")]
    prices = await get_until(client, PRICES, lambda p: _counted_levels(p) == expected, timeout_s=60)
    best = book_in(prices)["best_ask"]
    assert best["offer_id"] == cheap["id"]
    assert best["seller_reliability"] == FAILED_ONCE


async def _fills_with_a_minimum(
    client: httpx.AsyncClient, buyer: str, minimum: str, *, avoid: str
) -> dict[str, Any]:
    """Place an IOC order with ``minimum`` until one fills (matching learns the sellers' rates
    from billing.reliability moments after the prices show them; until then the order finds
    no qualifying seller and is cancelled): none ever fills from the offer ``avoid``."""

    async def attempt() -> dict[str, Any]:
        order = await final_order(client, buyer, market(1, min_reliability=minimum))
        assert avoid not in {fill["offer_id"] for fill in order["fills"]}, order
        return order

    order: dict[str, Any] = await waiting.eventually(
        attempt, lambda o: o["status"] == "filled", what="an order filled", interval_s=0.5
    )
    return order
