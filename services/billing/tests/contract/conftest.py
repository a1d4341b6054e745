"""The PostgreSQL side of the contract tests: billing's migrations on the session database."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from gpux_billing.bootstrap import MIGRATIONS
from gpux_platform import migrations
from gpux_platform.settings import GpuxSettings


@pytest.fixture(scope="module")
async def billing_pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(
        gpux_settings.database_url.get_secret_value(), min_size=1, max_size=2
    )
    await migrations.apply(pool, "billing", MIGRATIONS)
    yield pool
    await pool.close()
