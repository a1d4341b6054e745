"""PostgreSQL for tests: a pool on a test's database, with a schema's migrations applied, and a
connection whose transaction is rolled back."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg

from gpux_platform import migrations
from gpux_platform.db import create_pool
from gpux_platform.settings import GpuxSettings


@contextlib.asynccontextmanager
async def migrated_pool(
    settings: GpuxSettings,
    schema: str | None = None,
    directory: Path | None = None,
    *,
    max_size: int = 10,
) -> AsyncIterator[asyncpg.Pool]:
    """A pool on ``settings``' database; with a ``schema``, its migrations (the shared ones,
    then those in ``directory``) applied first. Closed on leaving."""
    pool = await create_pool(settings, max_size=max_size)
    try:
        if schema is not None:
            await migrations.apply(pool, schema, directory)
        yield pool
    finally:
        await pool.close()


@contextlib.asynccontextmanager
async def rolled_back(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A connection of ``pool`` inside a transaction that is rolled back on leaving, so a
    test's rows never outlive it."""
    async with pool.acquire() as conn:
        transaction = conn.transaction()
        await transaction.start()
        try:
            yield conn
        finally:
            await transaction.rollback()
