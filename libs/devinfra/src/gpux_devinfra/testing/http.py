"""Accounts, offers, books and polling through the public API, for tests that use only what
clients see."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from gpux_devinfra.testing import waiting


async def get_until(
    client: httpx.AsyncClient,
    path: str,
    check: Callable[[Any], object],
    *,
    timeout_s: float = 30,
    key: str = "",
) -> Any:
    """``GET path`` (as ``key``'s account when given) every 0.2 s until ``check(body)`` holds;
    that body. Fails after ``timeout_s`` with the last body (``eventually``)."""
    headers = auth(key) if key else {}

    async def body() -> Any:
        return (await client.get(path, headers=headers)).json()

    return await waiting.eventually(body, check, what=f"GET {path}", timeout_s=timeout_s)


eventually = get_until
"""The name services/gateway's tests still import; new code calls ``get_until``."""


async def account(client: httpx.AsyncClient, role: str) -> str:
    """Sign up an account named after its one role through the API; its API key."""
    created = await client.post("/v1/accounts", json={"name": role, "roles": [role]})
    assert created.status_code == 201, created.text
    return str(created.json()["api_key"])


def auth(key: str) -> dict[str, str]:
    """The header that authenticates a request with ``key``."""
    return {"Authorization": f"Bearer {key}"}


def offer_body(
    price: str, currency: str, gpus: int, *, gpu: str = "rtx-4090", **extra: Any
) -> dict[str, Any]:
    """A ``POST /v1/offers`` body: on-demand and billed by the hour unless ``extra`` says
    otherwise."""
    return {
        "gpu": gpu,
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": currency,
        "tier": "on_demand",
        "billing": "hour",
        **extra,
    }


async def push_offer(client: httpx.AsyncClient, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """Offer ``body`` as ``key``'s seller; the offer as the gateway took it (202)."""
    made = await client.post("/v1/offers", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    offer: dict[str, Any] = made.json()
    return offer


def book_in(prices: dict[str, Any], tier: str = "on_demand", region: str = "*") -> dict[str, Any]:
    """The book of ``tier`` in ``region`` of a ``GET /v1/prices/{gpu}`` answer (it must be
    there)."""
    found = find_book(prices, tier, region)
    assert found is not None, f"no {tier} book in {region}: {prices}"
    return found


def find_book(
    prices: dict[str, Any], tier: str = "on_demand", region: str = "*"
) -> dict[str, Any] | None:
    """The book of ``tier`` in ``region`` of a ``GET /v1/prices/{gpu}`` answer, if listed."""
    for item in prices["items"]:
        if item["tier"] == tier and item["region"] == region:
            book: dict[str, Any] = item
            return book
    return None
