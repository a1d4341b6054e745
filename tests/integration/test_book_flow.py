"""Offers through the real chain: gateway → pricing → matching → pricing → gateway.

Sellers offer GPUs in three currencies; the matching service puts them on the book (`live`),
pricing ranks them in EUR, and withdrawals and expiries move the best ask.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.http import eventually
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

# Default FX file: 1 USD = 0.92 EUR, 1 GBP = 1.18 EUR.
OFFERS = [
    ("0.40", "USD", 4),  # 0.368 EUR
    ("0.35", "EUR", 2),  # 0.35 EUR  <- cheapest in reference terms
    ("0.30", "GBP", 8),  # 0.354 EUR
]
EUR = "/v1/prices/rtx-4090?currency=EUR"


@pytest.fixture(scope="module")
async def stack(module_settings: GpuxSettings) -> AsyncIterator[str]:
    async with (
        running(CATALOG, module_settings),
        running(PRICING, module_settings),
        running(MATCHING, module_settings, expiry_interval_s=0.2),
        running(GATEWAY, module_settings, anonymous_rate_limit="10000/minute") as (url, _),
    ):
        yield url


def overall(body: dict[str, Any]) -> dict[str, Any] | None:
    for item in body["items"]:
        if item["tier"] == "on_demand" and item["region"] == "*":
            return item  # type: ignore[no-any-return]
    return None


def best_id(body: dict[str, Any]) -> str | None:
    book = overall(body)
    return book["best_ask"]["offer_id"] if book and book["best_ask"] else None


async def sell(
    client: httpx.AsyncClient, price: str, currency: str, gpus: int, **extra: Any
) -> dict[str, Any]:
    """A new seller offers GPUs; returns the offer with the seller's key."""
    signed = await client.post("/v1/accounts", json={"name": "farm", "roles": ["seller"]})
    key = signed.json()["api_key"]
    body = {
        "gpu": "rtx-4090",
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": currency,
        "tier": "on_demand",
        "billing": "hour",
        **extra,
    }
    created = await client.post("/v1/offers", json=body, headers={"Authorization": f"Bearer {key}"})
    assert created.status_code == 202, created.text
    return {**created.json(), "key": key}


async def test_book_reports_live_and_best_ask_moves_on_withdrawal_and_expiry(stack: str) -> None:
    async with httpx.AsyncClient(base_url=stack, timeout=30) as client:
        offers = [await sell(client, price, currency, gpus) for price, currency, gpus in OFFERS]
        for offer in offers:
            seen = await eventually(
                client,
                f"/v1/offers/{offer['id']}",
                lambda b: b["status"] == "live",
                key=offer["key"],
            )
            assert seen["status"] == "live"

        body = await eventually(
            client, EUR, lambda b: best_id(b) == offers[1]["id"] and len(overall(b)["depth"]) == 3
        )
        book = overall(body)
        assert book is not None
        assert book["best_ask"]["price"] == "0.35"
        assert book["best_ask"]["gpus"] == 2
        assert [(lvl["price"], lvl["gpus"]) for lvl in book["depth"]] == [
            ("0.35", 2),
            ("0.354", 8),
            ("0.368", 4),
        ]

        # The cheapest is withdrawn: the GBP offer (0.354 EUR) becomes the best ask.
        deleted = await client.delete(
            f"/v1/offers/{offers[1]['id']}",
            headers={"Authorization": f"Bearer {offers[1]['key']}"},
        )
        assert deleted.status_code == 202, deleted.text
        seen = await eventually(
            client,
            f"/v1/offers/{offers[1]['id']}",
            lambda b: b["status"] == "withdrawn",
            key=offers[1]["key"],
        )
        assert seen["status"] == "withdrawn"
        body = await eventually(client, EUR, lambda b: best_id(b) == offers[2]["id"])
        assert overall(body)["best_ask"]["price"] == "0.354"  # type: ignore[index]

        # A cheaper offer for ~3 s: it expires by itself and leaves the best ask.
        until = (SystemClock().now() + timedelta(seconds=3)).isoformat()
        short = await sell(client, "0.20", "EUR", 1, available_until=until)
        seen = await eventually(
            client,
            f"/v1/offers/{short['id']}",
            lambda b: b["status"] == "expired",
            key=short["key"],
        )
        assert seen["status"] == "expired"
        body = await eventually(client, EUR, lambda b: best_id(b) == offers[2]["id"])
        book = overall(body)
        assert book is not None
        assert best_id(body) == offers[2]["id"]
        assert [(lvl["price"], lvl["gpus"]) for lvl in book["depth"]] == [
            ("0.354", 8),
            ("0.368", 4),
        ]
