"""The PostgreSQL side of the contract suites: the session database, catalog migrations applied."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from gpux_catalog.bootstrap import MIGRATIONS, SPEC
from gpux_devinfra.testing.database import migrated_pool
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings


@pytest.fixture(scope="module")
async def pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    """The session database with the catalog's migrations applied, its outbox all sent."""
    async with migrated_pool(gpux_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        # Rows an earlier module queued are not this module's to see.
        await pool.execute(
            "UPDATE catalog.outbox SET published_at = now() WHERE published_at IS NULL"
        )
        yield pool
