"""A Redis outage during order flow: orders are still taken, within the rate limit counted per
process, readiness says degraded (not unready), and Redis counts again once it is back.

The gateway runs on a private Redis of this test's own (the shared one is never stopped).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gpux_contracts.topics import ORDERS_COMMANDS
from gpux_devinfra.testing.stores import PrivateStore
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.settings import GpuxSettings

from .conftest import ORDER, RunningGateway, commands_about, serving

LIMIT = 5


@pytest.fixture
async def on_private_redis(
    module_settings: GpuxSettings, private_redis: PrivateStore
) -> AsyncIterator[RunningGateway]:
    async with serving(
        module_settings,
        redis_url=private_redis.url,
        rate_limit=f"{LIMIT}/minute",
        anonymous_rate_limit="10000/minute",
    ) as served:
        yield served


async def place(client: httpx.AsyncClient, count: int) -> list[httpx.Response]:
    return [await client.post("/v1/orders", json=ORDER) for _ in range(count)]


async def test_orders_are_taken_within_a_per_process_limit_while_redis_is_down(
    on_private_redis: RunningGateway, private_redis: PrivateStore
) -> None:
    gateway = on_private_redis
    async with gateway.client() as anonymous:
        signed = await anonymous.post("/v1/accounts", json={"name": "acme", "roles": ["buyer"]})
    assert signed.status_code == 201, signed.text
    async with gateway.client(signed.json()["api_key"]) as client:
        before = await place(client, 2)  # counted in Redis
        await private_redis.stop()
        during = await place(client, LIMIT + 1)  # counted in this process, from an empty window
        async with gateway.client() as probe:
            ready = await probe.get("/readyz")
        await private_redis.start()

        def counted_in_redis(response: httpx.Response) -> bool:
            # Redis came back empty: its window holds this one request (the local one is full).
            remaining: str | None = response.headers.get("RateLimit-Remaining")
            return remaining == str(LIMIT - 1)

        await eventually(
            lambda: client.get("/v1/accounts/me"), counted_in_redis, what="Redis counting again"
        )
        after = await client.post("/v1/orders", json=ORDER)
    assert [r.status_code for r in before] == [202, 202]
    assert [r.status_code for r in during] == [202] * LIMIT + [429]
    assert during[-1].headers["RateLimit-Remaining"] == "0"
    assert 1 <= int(during[-1].headers["Retry-After"]) <= 60
    assert ready.status_code == 200, ready.text
    assert ready.json()["status"] == "degraded"
    assert ready.json()["checks"]["redis"] != "ok"
    assert ready.json()["checks"]["postgres"] == "ok"
    assert after.status_code == 202, after.text
    taken = [r.json()["id"] for r in [*before, *during[:LIMIT], after]]
    commands: list[dict[str, Any]] = []
    for order_id in taken:  # every order taken goes out as a command, outage or not
        commands += await commands_about(gateway, ORDERS_COMMANDS, "order_id", order_id, 0.5)
    assert [c["payload"]["order_id"] for c in commands] == taken
    assert {c["event_type"] for c in commands} == {"order.placed"}
