"""Both sides of the contract suites: matching's memory fakes and PostgreSQL (the session
database, matching's migrations applied), behind one ``units`` fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import asyncpg
import pytest

from gpux_matching.adapters.memory.unit_of_work import MemoryMatching
from gpux_matching.adapters.postgres import SCHEMA
from gpux_matching.adapters.postgres.unit_of_work import PostgresMatchingUnitOfWork
from gpux_matching.bootstrap import MIGRATIONS
from gpux_matching.service.unit_of_work import MatchingUnitOfWork
from gpux_platform import migrations
from gpux_platform.db import create_pool
from gpux_platform.settings import GpuxSettings

Units = Callable[[], AbstractAsyncContextManager[MatchingUnitOfWork]]


@pytest.fixture(scope="module")
async def pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    """The session database with matching's migrations applied."""
    pool = await create_pool(gpux_settings)
    await migrations.apply(pool, SCHEMA, MIGRATIONS)
    yield pool
    await pool.close()


@pytest.fixture(params=["memory", "postgres"])
def units(request: pytest.FixtureRequest, pool: asyncpg.Pool) -> Units:
    """Opens a unit of work over matching's repositories, on one side or the other."""
    if request.param == "memory":
        fake = MemoryMatching()
        return lambda: fake.bound(None)
    return lambda: PostgresMatchingUnitOfWork(pool)
