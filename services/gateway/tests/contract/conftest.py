"""Both sides of the repository contract: the memory unit of work and PostgreSQL's.

The PostgreSQL side runs on the session database with the gateway's migrations applied;
tests use fresh ids, so what other modules stored there does not meet them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import asyncpg
import pytest

from gpux_devinfra.testing.database import migrated_pool
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.bootstrap import MIGRATIONS, SPEC
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.clock import ManualClock
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings

Units = Callable[[], AbstractAsyncContextManager[GatewayUnitOfWork]]
"""Opens a unit of work on one store: ``async with units() as uow``."""


@pytest.fixture(scope="module")
async def pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    """The session database with the gateway's migrations applied."""
    async with migrated_pool(gpux_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        yield pool


@pytest.fixture
def clock() -> ManualClock:
    """The time both stores stamp changes with."""
    return ManualClock(EPOCH)


@pytest.fixture(params=["memory", "postgres"])
def units(request: pytest.FixtureRequest, clock: ManualClock) -> Units:
    """Units of work on the memory store or on PostgreSQL (every test runs on both)."""
    if request.param == "memory":
        memory = MemoryGatewayUnitOfWork(clock)
        return lambda: memory
    pool: asyncpg.Pool = request.getfixturevalue("pool")
    return lambda: PostgresGatewayUnitOfWork(pool, clock)
