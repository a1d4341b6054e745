"""Gateway → Kafka → pricing → Kafka → gateway: a seller sees what pricing decided."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

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
