"""Gateway → Kafka → pricing → Kafka → gateway: a seller sees what pricing decided."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.http import account, get_until, offer_body
from gpux_devinfra.testing.services import Running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

OFFER = offer_body("0.35", "USD", 4)


@pytest.fixture(scope="module")
async def market(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """Catalog, pricing and the gateway; the gateway."""
    async with stack(module_settings, CATALOG, PRICING, GATEWAY) as services:
        yield services["gateway"]


@contextlib.asynccontextmanager
async def as_new_seller(market: Running) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the gateway, as a new seller."""
    async with market.client() as anonymous:
        key = await account(anonymous, "seller")
    async with market.client(key) as client:
        yield client


async def test_unknown_gpu_is_rejected_with_its_reason_visible_to_the_seller(
    market: Running,
) -> None:
    async with as_new_seller(market) as client:
        offer = (await client.post("/v1/offers", json={**OFFER, "gpu": "tpu-v9"})).json()
        assert offer["status"] == "pending"
        seen = await get_until(
            client, f"/v1/offers/{offer['id']}", lambda b: b["status"] != "pending"
        )
    assert seen["status"] == "rejected"
    assert seen["reason"] == "unknown_gpu"
    assert seen["remaining_gpus"] == 0


async def test_valid_offer_is_accepted_and_a_bad_reprice_is_refused(market: Running) -> None:
    async with as_new_seller(market) as client:
        offer = (await client.post("/v1/offers", json=OFFER)).json()
        seen = await get_until(
            client, f"/v1/offers/{offer['id']}", lambda b: b["status"] != "pending"
        )
        assert seen["status"] == "accepted"
        assert seen["remaining_gpus"] == 4
        # 500 USD per GPU-hour is outside the default sanity band (0.01 to 100 EUR).
        refused = await client.patch(
            f"/v1/offers/{offer['id']}", json={"price_per_gpu_hour": "500"}
        )
        assert refused.status_code == 202
        after = await get_until(
            client, f"/v1/offers/{offer['id']}", lambda b: b["reason"] is not None
        )
    assert after["status"] == "accepted"
    assert after["reason"] == "price_out_of_band"


def problem_at(response: httpx.Response, status: int) -> list[list[str]]:
    """The ``loc`` of each of a problem's ``errors[]`` (the answer must be that problem)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return [error["loc"] for error in response.json().get("errors", [])]


async def gpus_read(client: httpx.AsyncClient) -> None:
    """Wait until the gateway has read the catalog (its GPU list answers)."""
    await get_until(client, "/v1/gpus", lambda b: bool(b.get("items")))


async def test_a_price_written_with_an_exponent_is_refused_by_the_published_pattern(
    market: Running,
) -> None:
    async with as_new_seller(market) as client:
        for price in ("1e3", "1E3", " 1", "+1", "0.30000"):
            refused = await client.post("/v1/offers", json={**OFFER, "price_per_gpu_hour": price})
            assert problem_at(refused, 422) == [["body", "price_per_gpu_hour"]], price
        made = (await client.post("/v1/offers", json=OFFER)).json()
        changed = await client.patch(f"/v1/offers/{made['id']}", json={"price_per_gpu_hour": "1e3"})
        assert problem_at(changed, 422) == [["body", "price_per_gpu_hour"]]


async def test_windows_and_unknown_models_are_422s_with_errors_like_any_other(
    market: Running,
) -> None:
    now = datetime.now(UTC)
    async with as_new_seller(market) as client:
        await gpus_read(client)
        for until in (now - timedelta(minutes=1), now + timedelta(days=400)):
            body = {**OFFER, "available_until": until.isoformat()}
            assert problem_at(await client.post("/v1/offers", json=body), 422) == [
                ["body", "available_until"]
            ]
            bulk = {"offers": [OFFER, body]}
            assert problem_at(await client.post("/v1/offers/bulk", json=bulk), 422) == [
                ["body", "offers", "1", "available_until"]
            ]
        estimate = await client.post("/v1/estimates", json={"model": "gpt-17", "method": "qlora"})
        assert problem_at(estimate, 422) == [["body", "model"]]
        query = {"model": "gpt-17", "method": "qlora"}
        recommended = await client.get("/v1/recommendations", params=query)
        assert problem_at(recommended, 422) == [["query", "model"]]


async def test_an_unknown_gpu_is_refused_alike_by_offers_orders_prices_and_the_book(
    market: Running,
) -> None:
    async with market.client() as anonymous:
        await gpus_read(anonymous)
        for path in ("/v1/prices/no-such-gpu", "/v1/orderbook/no-such-gpu"):
            assert problem_at(await anonymous.get(path), 404) == [], path
        history = await anonymous.get("/v1/prices/no-such-gpu/history")
        assert problem_at(history, 404) == []
        assert (await anonymous.get("/v1/prices/rtx-4090")).status_code == 200
        buyer = await account(anonymous, "buyer")
    order = {"gpu": "no-such-gpu", "gpus": 1, "type": "market", "currency": "EUR"}
    async with market.client(buyer) as client:
        placed = await client.post("/v1/orders", json=order)
        assert placed.status_code == 202, placed.text
        shown = (await client.get(f"/v1/orders/{placed.json()['id']}")).json()
    # As an offer for it is: rejected, with the reason pricing gives an offer (above).
    assert (shown["status"], shown["reason"]) == ("rejected", "unknown_gpu")
