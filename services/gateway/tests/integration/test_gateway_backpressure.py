"""Beyond its capacity the gateway refuses new writes with 503 and Retry-After; the write it
took completes, and writes are taken again once there is room.

The write under way is held deterministically: the test holds the advisory lock its
Idempotency-Key takes (``PostgresIdempotency.lock``), so the request waits inside its unit of
work, admitted and in flight, for as long as the test wants.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from gpux_devinfra.testing.http import account, auth
from gpux_devinfra.testing.services import Running, running
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC
from gpux_platform.settings import GpuxSettings

ORDER = {"gpu": "rtx-4090", "gpus": 1, "type": "market", "currency": "USD"}


@pytest.fixture
async def tiny(gpux_settings: GpuxSettings) -> AsyncIterator[Running]:
    """A gateway that takes one write at a time."""
    async with running(
        SPEC, gpux_settings, max_writes_in_flight=1, overload_retry_after_s=2
    ) as served:
        yield served


async def waiting_for_lock(conn: asyncpg.Connection) -> int:
    """How many sessions of this database wait for an advisory lock."""
    found = await conn.fetchval(
        "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
        " WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()"
    )
    return int(found)


async def test_beyond_capacity_writes_are_503_with_retry_after_and_the_taken_one_completes(
    tiny: Running,
) -> None:
    conn = await asyncpg.connect(tiny.settings.database_url.get_secret_value())
    async with tiny.client() as client:
        key = await account(client, "buyer")
        buyer_id = (await client.get("/v1/accounts/me", headers=auth(key))).json()["id"]
        held = conn.transaction()
        await held.start()
        try:
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{buyer_id}\x1fheld"
            )
            first = asyncio.create_task(post_order(client, key, "held"))
            await eventually(lambda: waiting_for_lock(conn), what="the first write in flight")
            refused = await asyncio.gather(*(post_order(client, key, None) for _ in range(5)))
            offer = await client.post("/v1/offers", json={}, headers=auth(key))
            read = await client.get("/v1/orders", headers=auth(key))
        finally:
            await held.rollback()
            await conn.close()
        accepted = await first
        after = await post_order(client, key, None)
    assert accepted.status_code == 202, accepted.text  # the write it took completes
    for response in [*refused, offer]:
        assert response.status_code == 503, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["Retry-After"] == "2"
        assert response.json()["type"].endswith("/overloaded")
    assert read.status_code == 200  # reads are never refused for overload
    assert after.status_code == 202, after.text  # room again: taken


async def post_order(
    client: httpx.AsyncClient, key: str, idempotency: str | None
) -> httpx.Response:
    headers = auth(key)
    if idempotency is not None:
        headers["Idempotency-Key"] = idempotency
    return await client.post("/v1/orders", json=ORDER, headers=headers)
