"""Offers in three currencies → pricing → best ask and depth, moving as the book reports.

The matching service (its own issue) is stood in for by publishing the status events it
will publish (`offer.status_changed` from producer `matching` on `offers.status`); pricing's
handling of them, its events, its Redis read model and the gateway's endpoints are real.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from decimal import Decimal
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_contracts.offers import OfferStatus
from gpux_contracts.topics import OFFERS_STATUS
from gpux_devinfra.testing.http import (
    auth,
    best_offer_id,
    book_in,
    get_until,
    ranked_three_currencies,
    sell_three_currencies,
)
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.payloads import offer_status
from gpux_devinfra.testing.services import Running, running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.redis_keys import BEST_ASKS
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING


@pytest.fixture(scope="module")
async def served(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """Catalog, pricing and the gateway (matching is stood in for); the gateway."""
    async with stack(module_settings, CATALOG, PRICING, GATEWAY) as services:
        yield services["gateway"]


async def book_reports(
    settings: GpuxSettings, offer: dict[str, Any], status: str, left: int
) -> None:
    """Publish what the book would say of an offer."""
    payload = offer_status(
        offer["id"], OfferStatus(status), left, seller_id=offer["seller_id"], gpu=offer["gpu"]
    )
    await publish_payloads(settings, OFFERS_STATUS, "matching", [(offer["gpu"], payload)])


async def test_best_ask_is_cheapest_in_reference_terms_and_moves(
    served: Running, module_settings: GpuxSettings
) -> None:
    settings = module_settings
    async with served.client() as client:
        offers = await sell_three_currencies(client, "accepted")
        for offer in offers:
            await book_reports(settings, offer, "live", offer["gpus"])
        eur = "/v1/prices/rtx-4090?currency=EUR"
        await ranked_three_currencies(client, eur, offers)
        usd = book_in((await client.get("/v1/prices/rtx-4090?currency=USD")).json())
        assert usd["best_ask"]["offered_currency"] == "EUR"

        await book_reports(settings, offers[1], "live", 1)  # partly filled
        await get_until(client, eur, lambda b: book_in(b)["best_ask"]["gpus"] == 1)
        await book_reports(settings, offers[1], "withdrawn", 0)  # the cheapest withdrawn
        body = await get_until(client, eur, lambda b: best_offer_id(b) == offers[2]["id"])
        assert book_in(body)["best_ask"]["price"] == "0.354"

        # Re-priced: the GBP offer goes up to 0.40 GBP (0.472 EUR); the USD one is now best.
        patched = await client.patch(
            f"/v1/offers/{offers[2]['id']}",
            json={"price_per_gpu_hour": "0.40"},
            headers=auth(offers[2]["key"]),
        )
        assert patched.status_code == 202
        await asyncio.sleep(1.5)  # pricing accepts the new revision
        await book_reports(settings, offers[2], "live", 8)
        body = await get_until(client, eur, lambda b: best_offer_id(b) == offers[0]["id"])
        assert book_in(body)["best_ask"]["price"] == "0.368"

        await book_reports(settings, offers[0], "expired", 0)
        body = await get_until(client, eur, lambda b: best_offer_id(b) == offers[2]["id"])
        assert book_in(body)["best_ask"]["price"] == "0.472"
        await the_best_ask_prices_gpus_and_jobs(client)


async def the_best_ask_prices_gpus_and_jobs(client: httpx.AsyncClient) -> None:
    """With the GBP offer at 0.40 GBP the only one on the book: the GPU list and the job
    recommendations price from it."""
    gpus = (await client.get("/v1/gpus?currency=USD")).json()["items"]
    rtx = next(g for g in gpus if g["id"] == "rtx-4090")
    assert rtx["best_ask"]["on_demand"]["currency"] == "USD"
    # 0.40 GBP = 0.472 EUR = 0.472 / 0.92 USD, to the micro-unit (half-to-even).
    assert rtx["best_ask"]["on_demand"]["price"] == "0.513043"
    assert "interruptible" not in rtx["best_ask"]

    # The job cost now comes from the live best ask of the tier.
    ranked = (
        await client.get(
            "/v1/recommendations",
            params={"model": "llama-3.1-8b", "method": "qlora", "currency": "USD"},
        )
    ).json()
    assert ranked["ranked_by"] == "cost"
    first = ranked["items"][0]
    assert first["gpu_id"] == "rtx-4090"  # the only GPU with an offer is priced first
    assert first["price_per_gpu_hour"] == "0.513043"
    assert Decimal(first["cost"]) == (
        Decimal(str(first["gpu_hours"])) * Decimal("0.513043")
    ).quantize(Decimal("0.000001"))


async def test_quote_changes_reach_the_live_price_stream(served: Running) -> None:
    events: list[dict[str, Any]] = []
    async with (
        served.client(timeout_s=20) as client,
        client.stream("GET", "/v1/stream/prices", headers={"Last-Event-ID": "0-0"}) as stream,
    ):
        async for line in stream.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if len(events) >= 3:
                    break
    assert all(e["gpu"] == "rtx-4090" for e in events)
    assert {e["region"] for e in events} >= {"*"}


async def test_restart_rebuilds_the_read_model_with_the_same_best_asks(
    served: Running, module_settings: GpuxSettings
) -> None:
    settings = module_settings
    redis = Redis.from_url(settings.redis_url)
    key = settings.redis_key(BEST_ASKS)
    before = await redis.hgetall(key)
    assert before
    await redis.delete(key)
    async with running(PRICING, settings):
        after = await redis.hgetall(key)
    await redis.aclose()
    assert without_as_of(after) == without_as_of(before)


def without_as_of(quotes: Mapping[bytes | str, bytes | str]) -> dict[bytes | str, bytes]:
    """The read model's quotes up to their ``as_of`` (a rebuild stamps them anew)."""
    raw = {k: v if isinstance(v, bytes) else v.encode() for k, v in quotes.items()}
    return {k: v.split(b'"as_of"')[0] for k, v in raw.items()}
