"""Billing's PostgreSQL fixtures: ``billing_pool``, the session database with billing's
migrations (contract and database tests); ``contract_conn``, the two sides of a repository
contract, and ``contract_tag``, a fresh prefix for its ids; and ``pool``, on the database of
the billing a test module runs (its ``billing`` fixture, which yields that billing's
settings)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from gpux_billing.bootstrap import MIGRATIONS
from gpux_contracts.ids import new_id
from gpux_devinfra.testing.database import migrated_pool, rolled_back
from gpux_platform.settings import GpuxSettings


@pytest.fixture(scope="module")
async def billing_pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(gpux_settings, "billing", MIGRATIONS, max_size=2) as pool:
        yield pool


@pytest.fixture(params=["memory", "postgres"])
async def contract_conn(
    request: pytest.FixtureRequest, billing_pool: asyncpg.Pool
) -> AsyncIterator[asyncpg.Connection | None]:
    """A repository contract's two sides: None for the memory fakes, and for PostgreSQL a
    connection of ``billing_pool`` in a transaction that is rolled back after the test."""
    if request.param == "memory":
        yield None
        return
    async with rolled_back(billing_pool) as conn:
        yield conn


@pytest.fixture
def contract_tag() -> str:
    """A fresh prefix for a contract test's ids: a letter and the random end of a new id."""
    return "c" + new_id()[-10:]


@pytest.fixture(scope="module")
async def pool(billing: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(billing) as pool:
        yield pool
