"""The Redis client of every service under a burst: callers wait for a connection, never fail."""

from __future__ import annotations

import asyncio

import pytest

from gpux_platform.cache import MAX_CONNECTIONS, create_redis
from gpux_platform.settings import GpuxSettings

pytestmark = pytest.mark.integration


async def test_more_concurrent_calls_than_connections_all_complete(
    gpux_settings: GpuxSettings,
) -> None:
    client = await create_redis(gpux_settings)
    prefix = f"{gpux_settings.namespace}pool-test"
    callers = 3 * MAX_CONNECTIONS

    async def call(i: int) -> bytes | str | None:
        # A blocking read holds its connection for a while, as the price stream's XREAD does.
        await client.blpop([f"{prefix}:empty:{i}"], timeout=0.1)
        await client.set(f"{prefix}:{i}", b"x")
        return await client.get(f"{prefix}:{i}")

    try:
        assert await asyncio.gather(*(call(i) for i in range(callers))) == [b"x"] * callers
    finally:
        await client.delete(*(f"{prefix}:{i}" for i in range(callers)))
        await client.aclose()
