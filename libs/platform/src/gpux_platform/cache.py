"""Redis: one client per service, with a clear error for a bad URL."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from gpux_platform.errors import ConfigError, redact
from gpux_platform.settings import GpuxSettings
from gpux_platform.waiting import within

READ_TIMEOUT_S = 30.0
"""How long a reply may take: longer than the longest blocking read a service makes (the
gateway's price stream waits up to 15 s in XREAD). redis-py 8 defaults to 5 s, which ended
every quiet price stream with a TimeoutError."""

MAX_CONNECTIONS = 128
"""Connections one process keeps at most. redis-py 8's default pool raises
``MaxConnectionsError`` (a 500) when 100 are in use; this pool makes the next caller wait for
one instead, up to ``connect_timeout_s``, so a burst of requests queues rather than fails."""


RETRIES = 10
"""Attempts after a command's connection failed (the server closed it, or refused a new one),
with a pause from 10 ms doubling up to 1 s between them: ~5 s, which a Redis restart fits
in. A blocked read (XREAD) is sent again on the new connection. redis-py's client has this by
default, but a pool built apart, as here, gives its connections no retry at all, so a
restart ended every open stream and failed the next command of every pooled connection."""


def retry_policy() -> Retry:
    """The retry of every connection of ``create_redis``'s pool: on a lost or refused
    connection only. A reply that timed out is not sent again (redis-py's default would): a
    Redis that hangs would otherwise hold a caller for ``RETRIES`` x ``READ_TIMEOUT_S``."""
    return Retry(
        ExponentialWithJitterBackoff(base=0.01, cap=1.0),
        RETRIES,
        supported_errors=(RedisConnectionError,),
    )


async def create_redis(settings: GpuxSettings) -> Redis:
    """A connected client, or a ConfigError naming GPUX_REDIS_URL."""
    try:
        pool = BlockingConnectionPool.from_url(
            settings.redis_url,
            max_connections=MAX_CONNECTIONS,
            timeout=settings.connect_timeout_s,
            socket_connect_timeout=settings.connect_timeout_s,
            socket_timeout=READ_TIMEOUT_S,
            retry=retry_policy(),
            decode_responses=False,
        )
        client: Redis = Redis.from_pool(pool)
        await within(client.ping(), settings.connect_timeout_s)
    except (RedisError, OSError, TimeoutError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        raise ConfigError(
            "GPUX_REDIS_URL", f"cannot reach {redact(settings.redis_url)}: {reason}"
        ) from exc
    return client
