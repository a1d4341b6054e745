"""Gateway → Kafka → pricing → Kafka → gateway: a seller sees what pricing decided."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.http import eventually as _until
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

OFFER = {
    "gpu": "rtx-4090",
    "gpus": 4,
    "price_per_gpu_hour": "0.35",
    "currency": "USD",
    "tier": "on_demand",
    "billing": "hour",
}


@pytest.fixture(scope="module")
async def market(module_settings: GpuxSettings) -> AsyncIterator[str]:
    async with (
        running(CATALOG, module_settings),
        running(PRICING, module_settings),
        running(GATEWAY, module_settings, anonymous_rate_limit="10000/minute") as (url, _),
    ):
        yield url


async def _seller(client: httpx.AsyncClient) -> str:
    response = await client.post("/v1/accounts", json={"name": "gpu farm", "roles": ["seller"]})
    assert response.status_code == 201
    return str(response.json()["api_key"])


async def test_unknown_gpu_is_rejected_with_its_reason_visible_to_the_seller(market: str) -> None:
    async with httpx.AsyncClient(base_url=market, timeout=30) as client:
        key = await _seller(client)
        client.headers["Authorization"] = f"Bearer {key}"
        offer = (await client.post("/v1/offers", json={**OFFER, "gpu": "tpu-v9"})).json()
        assert offer["status"] == "pending"
        seen = await _until(client, f"/v1/offers/{offer['id']}", lambda b: b["status"] != "pending")
    assert seen["status"] == "rejected"
    assert seen["reason"] == "unknown_gpu"
    assert seen["remaining_gpus"] == 0


async def test_valid_offer_is_accepted_and_a_bad_reprice_is_refused(market: str) -> None:
    async with httpx.AsyncClient(base_url=market, timeout=30) as client:
        key = await _seller(client)
        client.headers["Authorization"] = f"Bearer {key}"
        offer = (await client.post("/v1/offers", json=OFFER)).json()
        seen = await _until(client, f"/v1/offers/{offer['id']}", lambda b: b["status"] != "pending")
        assert seen["status"] == "accepted"
        assert seen["remaining_gpus"] == 4
        # 500 USD per GPU-hour is outside the default sanity band (0.01 to 100 EUR).
        refused = await client.patch(
            f"/v1/offers/{offer['id']}", json={"price_per_gpu_hour": "500"}
        )
        assert refused.status_code == 202
        after = await _until(client, f"/v1/offers/{offer['id']}", lambda b: b["reason"] is not None)
    assert after["status"] == "accepted"
    assert after["reason"] == "price_out_of_band"
