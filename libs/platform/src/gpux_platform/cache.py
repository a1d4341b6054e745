"""Redis: one client per service, with a clear error for a bad URL."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis
from redis.exceptions import RedisError

from gpux_platform.errors import ConfigError, redact
from gpux_platform.settings import GpuxSettings

READ_TIMEOUT_S = 30.0
"""How long a reply may take: longer than the longest blocking read a service makes (the
gateway's price stream waits up to 15 s in XREAD). redis-py 8 defaults to 5 s, which ended
every quiet price stream with a TimeoutError."""


async def create_redis(settings: GpuxSettings) -> Redis:
    """A connected client, or a ConfigError naming GPUX_REDIS_URL."""
    try:
        client: Redis = Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=settings.connect_timeout_s,
            socket_timeout=READ_TIMEOUT_S,
            decode_responses=False,
        )
        await asyncio.wait_for(client.ping(), timeout=settings.connect_timeout_s)
    except (RedisError, OSError, TimeoutError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        raise ConfigError(
            "GPUX_REDIS_URL", f"cannot reach {redact(settings.redis_url)}: {reason}"
        ) from exc
    return client
