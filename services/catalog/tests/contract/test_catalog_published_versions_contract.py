"""One suite for the published-versions repository, run on memory and on PostgreSQL.

The memory unit of work the service tests use must behave as the real one: what a unit
committed is what the next unit reads, a unit left without commit leaves nothing, and a
record replaces the one before (the newer-version rule is the domain's, not the store's).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime

import asyncpg
import pytest

from gpux_catalog.adapters.memory.unit_of_work import MemoryCatalogUnitOfWork
from gpux_catalog.adapters.postgres.unit_of_work import PostgresCatalogUnitOfWork
from gpux_catalog.domain.publication import PublishedVersion
from gpux_catalog.service.unit_of_work import CatalogUnitOfWork
from gpux_contracts.ids import new_id
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS

pytestmark = pytest.mark.integration

Units = Callable[[], AbstractAsyncContextManager[CatalogUnitOfWork]]
GPUS, MODELS = CATALOG_GPUS.name, CATALOG_MODELS.name
AT = datetime(2026, 1, 1, 12, 30, 15, 123456, tzinfo=UTC)
V1 = PublishedVersion(data_version=1, items=20, published_at=AT)
V2 = PublishedVersion(data_version=2, items=21, published_at=datetime(2026, 2, 1, tzinfo=UTC))


@pytest.fixture(params=["memory", "postgres"])
def units(request: pytest.FixtureRequest) -> Units:
    """Opens units of work on one store: one memory state, or one fresh namespace's rows."""
    if request.param == "memory":
        unit = MemoryCatalogUnitOfWork()
        return lambda: unit
    pool: asyncpg.Pool = request.getfixturevalue("pool")
    namespace = f"c{new_id()[-10:].lower()}."
    return lambda: PostgresCatalogUnitOfWork(pool, namespace)


async def stored(units: Units, *topics: str) -> dict[str, PublishedVersion]:
    """What a new unit reads for these topics."""
    async with units() as uow:
        return await uow.versions.get(topics)


async def test_a_topic_never_published_has_no_version(units: Units) -> None:
    assert await stored(units, GPUS, MODELS) == {}


async def test_a_committed_version_is_what_the_next_unit_reads(units: Units) -> None:
    async with units() as uow:
        await uow.versions.lock()
        await uow.versions.put(GPUS, V1)
        await uow.commit()
    assert await stored(units, GPUS, MODELS) == {GPUS: V1}


async def test_a_version_replaces_the_one_before_whatever_its_number(units: Units) -> None:
    for version in (V2, V1):
        async with units() as uow:
            await uow.versions.put(GPUS, version)
            await uow.commit()
        assert await stored(units, GPUS) == {GPUS: version}


async def test_only_the_topics_asked_for_are_read(units: Units) -> None:
    async with units() as uow:
        await uow.versions.put(GPUS, V1)
        await uow.versions.put(MODELS, V2)
        await uow.commit()
    assert await stored(units, MODELS, "catalog.unknown") == {MODELS: V2}
    assert await stored(units) == {}


async def test_a_unit_left_without_commit_records_nothing(units: Units) -> None:
    async with units() as uow:
        await uow.versions.put(GPUS, V1)
        assert await uow.versions.get([GPUS]) == {GPUS: V1}  # its own write, before commit
    assert await stored(units, GPUS) == {}
