"""Account events through the real chain (catalog, pricing, matching, billing, gateway): a
buyer tops up and leases a seller's GPUs for an hour; each party's GET /v1/stream/events
carries its own events of the trade — the buyer's balance, order and fill, the seller's
offer, both parties' lease — and none of the other's."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.sse import SseParser
from gpux_devinfra.testing.http import auth, leased_for_an_hour
from gpux_devinfra.testing.services import IN_TESTS, stack
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

pytestmark = pytest.mark.integration

GPU = "rtx-4090"


@pytest.fixture(scope="module")
async def client(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the gateway of the whole chain, in-process."""
    async with (
        stack(
            module_settings, CATALOG, PRICING, MATCHING, BILLING, GATEWAY, overrides=IN_TESTS
        ) as s,
        s["gateway"].client() as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def stream(client: httpx.AsyncClient, key: str) -> AsyncIterator[list[dict[str, Any]]]:
    """The account's events from the start, read in the background for the block's time."""
    bodies: list[dict[str, Any]] = []

    async def read() -> None:
        parser = SseParser()
        path = "/v1/stream/events?from=start"
        async with client.stream("GET", path, headers=auth(key), timeout=None) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if (event := parser.line(line)) is not None:
                    bodies.append(json.loads(event.data))

    task = asyncio.create_task(read())
    try:
        yield bodies
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def types_of(bodies: list[dict[str, Any]]) -> set[str]:
    return {b["type"] for b in bodies}


async def test_each_party_hears_its_own_events_of_a_trade(client: httpx.AsyncClient) -> None:
    seller, buyer, order_id = await leased_for_an_hour(client, GPU, 2, "2.00", "50")
    buyers_types = {"balance.updated", "order.updated", "order.filled", "lease.opened"}
    async with stream(client, buyer) as bought, stream(client, seller) as sold:
        await eventually(lambda: buyers_types <= types_of(bought), what="the buyer's events")
        await eventually(
            lambda: {"offer.updated", "lease.opened"} <= types_of(sold), what="the seller's events"
        )
    buyer_id = bought[0]["account_id"]
    seller_id = sold[0]["account_id"]
    assert {b["account_id"] for b in bought} == {buyer_id}
    assert {b["account_id"] for b in sold} == {seller_id}
    assert buyer_id != seller_id
    assert not {"order.updated", "order.filled"} & types_of(sold)
    assert "offer.updated" not in types_of(bought)
    filled = [b for b in bought if b["type"] == "order.updated" and b["data"]["status"] == "filled"]
    assert [b["data"]["order_id"] for b in filled] == [order_id]
    (fill,) = [b for b in bought if b["type"] == "order.filled"]
    assert fill["data"]["gpus"] == 2
    assert Decimal(fill["data"]["price_per_gpu_hour"]) == Decimal("2.00")
    leases = {b["data"]["lease_id"] for b in bought + sold if b["type"] == "lease.opened"}
    assert leases == {fill["data"]["trade_id"]}
    assert len({b["id"] for b in bought}) == len(bought)  # each event once
