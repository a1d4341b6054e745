"""The publication check on the memory unit of work: what is queued, when, and all at once."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.adapters.memory.published import MemoryPublishedVersions
from gpux_catalog.adapters.memory.unit_of_work import MemoryCatalogUnitOfWork
from gpux_catalog.domain.publication import PublishedVersion
from gpux_catalog.entrypoints.loops import check, resync_loop
from gpux_catalog.service.publication import gpu_messages, model_messages, sync_catalog
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_platform.broker import Outgoing

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LATER = datetime(2026, 6, 1, tzinfo=UTC)
GPUS, MODELS = load_gpu_catalog(), load_model_catalog()


async def first_check() -> MemoryCatalogUnitOfWork:
    """A unit of work after the first start-up's check."""
    unit = MemoryCatalogUnitOfWork()
    await check(lambda: unit, gpus=GPUS, models=MODELS, now=NOW)
    return unit


def event_ids(messages: Sequence[Outgoing]) -> list[str]:
    return [m.envelope.event_id for m in messages]


async def test_the_first_check_queues_every_gpu_and_model_with_their_versions_in_one_unit() -> None:
    unit = MemoryCatalogUnitOfWork()
    queued = await check(lambda: unit, gpus=GPUS, models=MODELS, now=NOW)
    expected = {
        CATALOG_GPUS.name: PublishedVersion(GPUS.version, len(GPUS), NOW),
        CATALOG_MODELS.name: PublishedVersion(MODELS.version, len(MODELS), NOW),
    }
    assert queued == expected
    assert unit.state.versions == expected
    assert unit.commits == 1
    assert unit.published == gpu_messages(GPUS, NOW) + model_messages(MODELS, NOW)


async def test_the_same_data_again_queues_nothing() -> None:
    unit = await first_check()
    before, versions = list(unit.published), dict(unit.state.versions)
    assert await check(lambda: unit, gpus=GPUS, models=MODELS, now=LATER) == {}
    assert unit.published == before
    assert unit.state.versions == versions


async def test_a_newer_gpu_table_republishes_that_topic_only_and_an_older_one_nothing() -> None:
    unit = await first_check()
    before = list(unit.published)
    newer = dataclasses.replace(GPUS, version=GPUS.version + 1)
    queued = await check(lambda: unit, gpus=newer, models=MODELS, now=LATER)
    assert queued == {CATALOG_GPUS.name: PublishedVersion(newer.version, len(newer), LATER)}
    assert unit.published == before + gpu_messages(newer, LATER)
    assert unit.state.versions[CATALOG_MODELS.name].published_at == NOW
    # An older replica (rolling deploy) does not overwrite it.
    assert await check(lambda: unit, gpus=GPUS, models=MODELS, now=LATER) == {}
    assert unit.state.versions[CATALOG_GPUS.name].data_version == newer.version


async def test_a_deleted_version_record_republishes_its_topic_with_the_same_event_ids() -> None:
    unit = await first_check()
    before = list(unit.published)
    del unit.state.versions[CATALOG_MODELS.name]
    queued = await check(lambda: unit, gpus=GPUS, models=MODELS, now=LATER)
    assert list(queued) == [CATALOG_MODELS.name]
    assert unit.published[: len(before)] == before
    again = unit.published[len(before) :]
    assert again == model_messages(MODELS, LATER)
    assert event_ids(again) == event_ids(model_messages(MODELS, NOW))


class FailingVersions(MemoryPublishedVersions):
    """Refuses to record the models topic, as a database error would."""

    async def put(self, topic: str, version: PublishedVersion) -> None:
        if topic == CATALOG_MODELS.name:
            raise RuntimeError("the database went away")
        await super().put(topic, version)


class FailingUnit(MemoryCatalogUnitOfWork):
    @property
    def versions(self) -> FailingVersions:
        return FailingVersions(self.state)


async def test_a_failed_check_records_no_version_and_queues_no_record() -> None:
    unit = FailingUnit()
    with pytest.raises(RuntimeError, match="went away"):
        await check(lambda: unit, gpus=GPUS, models=MODELS, now=NOW)
    assert (unit.commits, unit.published, unit.state.versions) == (0, [], {})


async def test_the_handler_leaves_the_commit_to_its_caller() -> None:
    unit = MemoryCatalogUnitOfWork()
    async with unit:
        queued = await sync_catalog(unit, gpus=GPUS, models=MODELS, now=NOW)
    assert list(queued) == [CATALOG_GPUS.name, CATALOG_MODELS.name]
    assert (unit.commits, unit.published, unit.state.versions) == (0, [], {})


async def test_the_periodic_check_survives_a_failure_and_checks_again() -> None:
    calls: list[int] = []

    async def sync() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise OSError("PostgreSQL away")
        raise asyncio.CancelledError  # what stopping the service does

    with pytest.raises(asyncio.CancelledError):
        await resync_loop(sync, 0)
    assert calls == [0, 1]
