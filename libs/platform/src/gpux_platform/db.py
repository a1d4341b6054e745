"""PostgreSQL through asyncpg: a pool per service, with clear errors for a bad URL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import asyncpg

from gpux_platform.errors import ConfigError, redact
from gpux_platform.settings import GpuxSettings
from gpux_platform.waiting import within


async def create_pool(
    settings: GpuxSettings,
    min_size: int = 1,
    max_size: int = 10,
    init: Callable[[asyncpg.Connection], Awaitable[None]] | None = None,
) -> asyncpg.Pool:
    """Open a pool, or raise a ConfigError naming GPUX_DATABASE_URL.

    ``init`` runs on every new connection (SQL spans come from the asyncpg instrumentation,
    ``telemetry.instrument_libraries``).
    """
    url = settings.database_url.get_secret_value()
    try:
        pool = await within(
            asyncpg.create_pool(url, min_size=min_size, max_size=max_size, init=init),
            settings.connect_timeout_s,
        )
    except (OSError, TimeoutError, asyncpg.PostgresError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        raise ConfigError(
            "GPUX_DATABASE_URL", f"cannot connect to {redact(url)}: {reason}"
        ) from exc
    if pool is None:  # pragma: no cover - asyncpg returns None only without awaiting
        raise ConfigError("GPUX_DATABASE_URL", "no pool")
    return pool
