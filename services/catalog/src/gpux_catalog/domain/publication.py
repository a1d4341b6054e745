"""The catalog topics' records, and the rule that decides which topic is given them again.

Event ids are derived from (topic, id, data version): publishing the same data version
again produces the same events, so a consumer that deduplicates on ``event_id`` sees one
event per item and version, and a compacted topic keeps the same latest value per key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpux_contracts.catalog import GpuFit, GpuPublished, ModelPublished
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS, Topic
from gpux_estimator import GpuCatalog, GpuSpec, ModelArch, ModelCatalog, fit_for_gpu

PRODUCER = "catalog"


@dataclass(frozen=True, slots=True)
class PublishedVersion:
    """What a catalog topic was last given: a data version, how many records, and when."""

    data_version: int
    items: int
    published_at: datetime


@dataclass(frozen=True, slots=True)
class Release:
    """One data version of one catalog topic: its records, ``(key, envelope)`` in file order."""

    topic: Topic
    data_version: int
    records: tuple[tuple[str, Envelope[Any]], ...]

    def published(self, at: datetime) -> PublishedVersion:
        """What the topic holds once this release was published at ``at``."""
        return PublishedVersion(self.data_version, len(self.records), at)


def _shared(
    source: object, payload: type[GpuFit | GpuPublished | ModelPublished]
) -> dict[str, Any]:
    """``source``'s values of the payload's fields that it has, by name: the estimator's
    objects and the catalog's payloads name their common figures alike."""
    return {name: getattr(source, name) for name in payload.model_fields if hasattr(source, name)}


def gpu_payload(gpu: GpuSpec, data_version: int) -> GpuPublished:
    """The published state of one GPU: its specs and the rule-of-thumb fit."""
    fit = GpuFit(**_shared(fit_for_gpu(gpu), GpuFit))
    return GpuPublished(**_shared(gpu, GpuPublished), fit=fit, data_version=data_version)


def model_payload(model: ModelArch, data_version: int) -> ModelPublished:
    """The published state of one model architecture."""
    return ModelPublished(**_shared(model, ModelPublished), data_version=data_version)


def _record(
    topic: Topic, item_id: str, payload: GpuPublished | ModelPublished, now: datetime
) -> tuple[str, Envelope[Any]]:
    """One record keyed by the item's id, its event id derived from (topic, id, version)."""
    event_id = stable_id(topic.name, item_id, str(payload.data_version))
    return item_id, wrap(payload, producer=PRODUCER, occurred_at=now, event_id=event_id)


def gpu_release(gpus: GpuCatalog, now: datetime) -> Release:
    """One ``gpu.published`` record per GPU, keyed by GPU id, in data-file order."""
    records = tuple(
        _record(CATALOG_GPUS, gpu.id, gpu_payload(gpu, gpus.version), now) for gpu in gpus
    )
    return Release(CATALOG_GPUS, gpus.version, records)


def model_release(models: ModelCatalog, now: datetime) -> Release:
    """One ``model.published`` record per model, keyed by model id, in data-file order."""
    records = tuple(
        _record(CATALOG_MODELS, model.id, model_payload(model, models.version), now)
        for model in models
    )
    return Release(CATALOG_MODELS, models.version, records)


def needs_publish(last_version: int | None, data_version: int) -> bool:
    """Publish when the topic never got this data, or got an older version of it."""
    return last_version is None or data_version > last_version


def due(releases: Sequence[Release], last: Mapping[str, PublishedVersion]) -> list[Release]:
    """The releases newer than what their topic (by name) was last given, in order.

    A topic without a record is due: it never got the data, or an operator deleted its
    record to have it published again (after recreating the topic). An older release (a
    replica of a rolling deploy) is never due, so it cannot overwrite a newer catalog.
    """
    ready = []
    for release in releases:
        known = last.get(release.topic.name)
        if needs_publish(None if known is None else known.data_version, release.data_version):
            ready.append(release)
    return ready
