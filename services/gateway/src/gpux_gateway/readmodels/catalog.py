"""The gateway's view of the catalog, rebuilt from ``catalog.gpus`` and ``catalog.models``.

It holds the latest record per id (what a compacted topic means) and the domain objects
the catalog's pure estimators take, so estimates run on data that came from Kafka alone.
A record it cannot read (an unknown event version, an inconsistent shape) is logged,
counted and skipped: the previous value of that id stays. A record without a value (a
tombstone) removes its id.

Readiness (``gpux_platform.compacted``): ready once it has read up to each partition's end
offset as of start-up, so the routes never answer from a half-read catalog after a restart.
"""

from __future__ import annotations

import logging
from typing import Any

from gpux_contracts.catalog import GpuPublished, ModelPublished
from gpux_contracts.events import EventCodec
from gpux_estimator import GpuCatalog, GpuSpec, ModelArch, ModelCatalog
from gpux_platform.compacted import CompactedView

log = logging.getLogger("gpux.gateway.catalog")


def gpu_spec(payload: GpuPublished) -> GpuSpec:
    """The domain object of a published GPU."""
    fields = payload.model_dump(exclude={"fit", "data_version"})
    return GpuSpec(**fields)


def model_arch(payload: ModelPublished) -> ModelArch:
    """The domain object of a published model (its invariants are checked again here)."""
    return ModelArch(**payload.model_dump(exclude={"data_version"}))


def _gpu_order(payload: GpuPublished) -> tuple[float, float, str]:
    # The reference page's order: by memory, then bandwidth.
    return (payload.memory_gb, payload.bandwidth_gb_s, payload.id)


def _model_order(payload: ModelPublished) -> tuple[float, str]:
    return (payload.params_b, payload.id)


class CatalogView(CompactedView):
    """Every published GPU and model, as payloads and as domain catalogs, kept in memory."""

    def __init__(self, gpu_topic: str, model_topic: str) -> None:
        super().__init__(gpu_topic, model_topic)
        self._gpu_topic = gpu_topic
        self._model_topic = model_topic
        self._codec: EventCodec[Any] = EventCodec(GpuPublished, ModelPublished)
        self._gpus: dict[str, GpuPublished] = {}
        self._models: dict[str, ModelPublished] = {}
        self._gpu_catalog = GpuCatalog(version=0, gpus=())
        self._model_catalog = ModelCatalog(version=0, models=())

    @property
    def holds_catalog(self) -> bool:
        """Ready, and the topics held GPUs and models (the catalog service has published)."""
        return self.ready and bool(self._gpus) and bool(self._models)

    def gpus(self) -> list[GpuPublished]:
        """Every GPU, ordered by memory, then bandwidth (as on the reference page)."""
        return sorted(self._gpus.values(), key=_gpu_order)

    def gpu(self, gpu_id: str) -> GpuPublished | None:
        """One GPU, if published."""
        return self._gpus.get(gpu_id)

    def lacks_gpu(self, gpu_id: str) -> bool:
        """Whether the catalog is read and has no such GPU (unread, nothing is known lacking)."""
        return self.holds_catalog and gpu_id not in self._gpus

    def models(self) -> list[ModelPublished]:
        """Every model, smallest first."""
        return sorted(self._models.values(), key=_model_order)

    def model(self, model_id: str) -> ModelPublished | None:
        """One model, if published."""
        return self._models.get(model_id)

    @property
    def gpu_catalog(self) -> GpuCatalog:
        """The GPUs as the domain's catalog (what the estimators take), in list order."""
        return self._gpu_catalog

    @property
    def model_catalog(self) -> ModelCatalog:
        """The models as the domain's catalog."""
        return self._model_catalog

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record of either topic into the view (never raises on bad data)."""
        self._read(topic, partition, offset)
        if topic not in self.topics or key is None:
            self._reject(topic, offset, "a record without a key, or of another topic")
            return
        try:
            self._apply_value(topic, key.decode(), value)
        except ValueError as exc:  # pydantic's, the codec's and the domain's errors all are
            self._reject(topic, offset, repr(exc))

    def _apply_value(self, topic: str, key: str, value: bytes | None) -> None:
        is_gpu = topic == self._gpu_topic
        gpus, models = dict(self._gpus), dict(self._models)
        target: dict[str, Any] = gpus if is_gpu else models
        if value is None:
            target.pop(key, None)
        else:
            payload = self._codec.decode(value).payload
            expected = GpuPublished if is_gpu else ModelPublished
            if not isinstance(payload, expected) or payload.id != key:
                raise ValueError(f"{type(payload).__name__} {payload.id!r} under key {key!r}")
            target[key] = payload
        # Build the domain catalogs first: if they refuse the data, the view is unchanged.
        if is_gpu:
            ordered_gpus = sorted(gpus.values(), key=_gpu_order)
            self._gpu_catalog = GpuCatalog(
                version=max((g.data_version for g in ordered_gpus), default=0),
                gpus=tuple(gpu_spec(g) for g in ordered_gpus),
            )
            self._gpus = gpus
        else:
            ordered_models = sorted(models.values(), key=_model_order)
            self._model_catalog = ModelCatalog(
                version=max((m.data_version for m in ordered_models), default=0),
                models=tuple(model_arch(m) for m in ordered_models),
            )
            self._models = models
