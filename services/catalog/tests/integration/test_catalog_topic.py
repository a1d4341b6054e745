"""The catalog service publishes its data to Kafka; a fresh reader rebuilds the whole catalog."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import asyncpg
import pytest
from aiokafka import ConsumerRecord

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.adapters.postgres.unit_of_work import PostgresCatalogUnitOfWork
from gpux_catalog.bootstrap import SPEC
from gpux_catalog.config import CatalogSettings
from gpux_catalog.domain.publication import gpu_payload, model_payload
from gpux_catalog.entrypoints.loops import check
from gpux_contracts.catalog import GpuPublished, ModelPublished
from gpux_contracts.events import EventCodec
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_devinfra.testing.kafka import records_to_end
from gpux_devinfra.testing.waiting import eventually
from gpux_estimator import fit_for_gpu
from gpux_platform.service import Runtime, open_runtime, started
from gpux_platform.settings import GpuxSettings

CODEC: EventCodec[Any] = EventCodec(GpuPublished, ModelPublished)


@pytest.fixture(scope="module")
async def catalog(module_settings: GpuxSettings) -> AsyncIterator[Runtime]:
    """The catalog service, started and its records relayed, in a namespace and database of
    this module alone."""
    # Its own namespace: the version-bump test below must not reach the gateway's view. Its
    # own database: one catalog outbox serves one namespace (its relay publishes every row).
    settings = CatalogSettings(
        **{**module_settings.model_dump(), "database_url": module_settings.database_url}
    )
    runtime = await open_runtime(SPEC, settings)
    try:
        wiring = await SPEC.wire(runtime)
        async with started(runtime, wiring):
            await relayed(runtime.pool)
            yield runtime
    finally:
        await runtime.close()


async def relayed(pool: asyncpg.Pool) -> None:
    """Wait until the outbox relay has published every record a check queued."""
    pending = "SELECT count(*) FROM catalog.outbox WHERE published_at IS NULL"
    await eventually(lambda: pool.fetchval(pending), lambda n: n == 0, what="the outbox relayed")


class CountedUnitOfWork(PostgresCatalogUnitOfWork):
    """The real unit of work, counting its commits and the records each one queued."""

    commits: list[int]

    async def commit(self) -> None:
        self.commits.append(len(self.outbox.messages))
        await super().commit()


def counted(runtime: Runtime, commits: list[int]) -> CountedUnitOfWork:
    """A counted unit of work of this runtime's namespace, reporting into ``commits``."""
    unit = CountedUnitOfWork(runtime.pool, runtime.settings.namespace)
    unit.commits = commits
    return unit


def latest_per_key(records: list[ConsumerRecord[Any, Any]]) -> dict[str, Any]:
    """What a compacted topic means: the last value of each key."""
    state: dict[str, Any] = {}
    for record in records:
        state[record.key.decode()] = CODEC.decode(record.value).payload
    return state


async def test_a_fresh_consumer_rebuilds_every_gpu_with_specs_and_fit(catalog: Runtime) -> None:
    gpus = load_gpu_catalog()
    state = latest_per_key(await records_to_end(catalog.settings, CATALOG_GPUS))
    assert set(state) == set(gpus.ids)
    for gpu in gpus:
        published = state[gpu.id]
        assert isinstance(published, GpuPublished)
        assert published == gpu_payload(gpu, gpus.version)
        for field in dataclasses.fields(gpu):
            assert getattr(published, field.name) == getattr(gpu, field.name)
        fit = fit_for_gpu(gpu)
        assert (published.fit.qlora_b, published.fit.lora16_b, published.fit.full_b) == (
            fit.qlora_b,
            fit.lora16_b,
            fit.full_b,
        )
    assert (state["rtx-4090"].fit.qlora_b, state["rtx-4090"].fit.lora16_b) == (15, 7)


async def test_a_fresh_consumer_rebuilds_every_model(catalog: Runtime) -> None:
    models = load_model_catalog()
    state = latest_per_key(await records_to_end(catalog.settings, CATALOG_MODELS))
    assert state == {m.id: model_payload(m, models.version) for m in models}


async def test_only_a_newer_data_version_is_published_again(catalog: Runtime) -> None:
    settings = catalog.settings
    gpus, models = load_gpu_catalog(), load_model_catalog()
    rows = await catalog.pool.fetch("SELECT topic, data_version, items FROM catalog.published")
    assert {(r["topic"], r["data_version"], r["items"]) for r in rows} == {
        (settings.topic(CATALOG_GPUS), gpus.version, len(gpus)),
        (settings.topic(CATALOG_MODELS), models.version, len(models)),
    }
    before = len(await records_to_end(settings, CATALOG_GPUS))
    now = catalog.clock.now()
    commits: list[int] = []
    unit_of_work = partial(counted, catalog, commits)

    # A restart with the same data publishes nothing.
    assert await check(unit_of_work, gpus=gpus, models=models, now=now) == {}
    await relayed(catalog.pool)
    assert len(await records_to_end(settings, CATALOG_GPUS)) == before

    # A build with a newer GPU table republishes that topic, and only that one: its version
    # and every record of it in one unit of work.
    newer = dataclasses.replace(gpus, version=gpus.version + 1)
    published = await check(unit_of_work, gpus=newer, models=models, now=now)
    assert list(published) == [CATALOG_GPUS.name]
    assert commits == [0, len(newer)]
    await relayed(catalog.pool)
    state = latest_per_key(await records_to_end(settings, CATALOG_GPUS))
    assert {p.data_version for p in state.values()} == {newer.version}

    # An older replica (rolling deploy) does not overwrite it.
    assert await check(unit_of_work, gpus=gpus, models=models, now=now) == {}
    version = "SELECT data_version FROM catalog.published WHERE topic = $1"
    assert await catalog.pool.fetchval(version, settings.topic(CATALOG_GPUS)) == newer.version


async def test_a_deleted_version_row_publishes_its_topic_again_with_the_same_ids(
    catalog: Runtime,
) -> None:
    settings = catalog.settings
    gpus, models = load_gpu_catalog(), load_model_catalog()
    first = [CODEC.decode(r.value).event_id for r in await records_to_end(settings, CATALOG_MODELS)]
    assert len(first) == len(models)
    # What an operator does after recreating the topic.
    await catalog.pool.execute(
        "DELETE FROM catalog.published WHERE topic = $1", settings.topic(CATALOG_MODELS)
    )
    unit_of_work = partial(PostgresCatalogUnitOfWork, catalog.pool, settings.namespace)
    published = await check(unit_of_work, gpus=gpus, models=models, now=catalog.clock.now())
    assert list(published) == [CATALOG_MODELS.name]
    await relayed(catalog.pool)
    again = [CODEC.decode(r.value).event_id for r in await records_to_end(settings, CATALOG_MODELS)]
    assert again == first + first
