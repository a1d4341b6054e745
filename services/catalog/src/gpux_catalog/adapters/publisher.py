"""Deprecated import path, kept only while other packages' tests still use it.

``gpu_messages`` and ``model_messages`` are ``gpux_catalog.service.publication``'s; instead
of ``publish_catalog``, publish them with ``gpux_platform.broker.publish_many``. This module
goes once those tests import from there.
"""

from __future__ import annotations

from datetime import datetime

from faststream.kafka import KafkaBroker

from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_estimator import GpuCatalog, ModelCatalog
from gpux_platform.broker import publish_many
from gpux_platform.settings import GpuxSettings

__all__ = ["gpu_messages", "model_messages", "publish_catalog"]


async def publish_catalog(
    broker: KafkaBroker,
    settings: GpuxSettings,
    gpus: GpuCatalog,
    models: ModelCatalog,
    now: datetime,
) -> int:
    """Publish every GPU and every model unconditionally; returns how many records."""
    records = gpu_messages(gpus, now) + model_messages(models, now)
    await publish_many(broker, settings, records)
    return len(records)
