"""Publishing the catalog: at start-up, and again whenever a newer data version is deployed.

The GPU and model tables are packaged with the service, so "the data changed" means "a
build whose ``gpus.toml`` / ``models.toml`` carries a higher ``version`` started". Each
topic's last published version is kept beside the records queued for it, in one unit of
work: the outbox relay publishes them once the unit committed, so a version is recorded
if and only if its records will reach the topic. A restart with the same version queues
nothing, and a replica older than what the topic holds (a rolling deploy) never
overwrites it. A deleted version record has its topic published again.
"""

from __future__ import annotations

from datetime import datetime

from gpux_catalog.domain.publication import (
    PublishedVersion,
    Release,
    due,
    gpu_release,
    model_release,
)
from gpux_catalog.service.unit_of_work import CatalogUnitOfWork
from gpux_estimator import GpuCatalog, ModelCatalog
from gpux_platform.broker import Outgoing


def messages(release: Release) -> list[Outgoing]:
    """The outgoing records of a release, on its topic, in data-file order."""
    return [Outgoing(release.topic, key, envelope) for key, envelope in release.records]


def gpu_messages(gpus: GpuCatalog, now: datetime) -> list[Outgoing]:
    """One ``gpu.published`` record per GPU, keyed by GPU id, in data-file order."""
    return messages(gpu_release(gpus, now))


def model_messages(models: ModelCatalog, now: datetime) -> list[Outgoing]:
    """One ``model.published`` record per model, keyed by model id, in data-file order."""
    return messages(model_release(models, now))


async def sync_catalog(
    uow: CatalogUnitOfWork, *, gpus: GpuCatalog, models: ModelCatalog, now: datetime
) -> dict[str, PublishedVersion]:
    """Queue each catalog topic whose data is newer than what it holds; returns those topics
    (by logical name) with what they now hold. The caller commits the unit."""
    # Two replicas starting together would otherwise both publish (harmless but noisy).
    await uow.versions.lock()
    releases = [gpu_release(gpus, now), model_release(models, now)]
    last = await uow.versions.get([release.topic.name for release in releases])
    queued: dict[str, PublishedVersion] = {}
    for release in due(releases, last):
        uow.outbox.add(*messages(release))
        queued[release.topic.name] = release.published(now)
        await uow.versions.put(release.topic.name, queued[release.topic.name])
    return queued
