"""The PostgreSQL side of the contract suites: the session database with pricing's migrations."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from gpux_devinfra.testing.database import migrated_pool
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import MIGRATIONS, SPEC


@pytest.fixture(scope="module")
async def pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    """The session database with pricing's migrations applied."""
    async with migrated_pool(gpux_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        yield pool
