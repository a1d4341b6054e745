"""Publishing the catalog: at start-up, and again whenever a newer data version is deployed.

The GPU and model tables are packaged with the service, so "the data changed" means "a
build whose ``gpus.toml`` / ``models.toml`` carries a higher ``version`` started". Each
topic's last published version is kept in ``catalog.published``: a restart with the same
version publishes nothing, and a replica older than what the topic holds (a rolling
deploy) never overwrites it. Kafka is written before the row (at-least-once): a crash in
between publishes the same records again next time, which the compacted topic absorbs.
The periodic check retries a failed publish and honours an operator who deleted a row
to force a republish (e.g. after the topic was recreated).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

import asyncpg
from faststream.kafka import KafkaBroker

from gpux_catalog.adapters import repository
from gpux_catalog.adapters.publisher import gpu_messages, model_messages
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS, Topic
from gpux_estimator import GpuCatalog, ModelCatalog
from gpux_platform.broker import Outgoing, publish_many
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.catalog")


def needs_publish(last_version: int | None, data_version: int) -> bool:
    """Publish when the topic never got this data, or got an older version of it."""
    return last_version is None or data_version > last_version


def _batches(
    gpus: GpuCatalog, models: ModelCatalog, now: datetime
) -> list[tuple[Topic, int, list[Outgoing]]]:
    """(topic, data version, records) of each catalog topic."""
    return [
        (CATALOG_GPUS, gpus.version, gpu_messages(gpus, now)),
        (CATALOG_MODELS, models.version, model_messages(models, now)),
    ]


async def sync_catalog(
    pool: asyncpg.Pool,
    broker: KafkaBroker,
    settings: GpuxSettings,
    now: datetime,
    gpus: GpuCatalog,
    models: ModelCatalog,
) -> list[str]:
    """Publish each catalog topic whose data is newer than what it holds; returns those."""
    batches = _batches(gpus, models, now)
    names = {topic.name: settings.topic(topic) for topic, _, _ in batches}
    published: list[str] = []
    async with pool.acquire() as conn, conn.transaction():
        # Two replicas starting together would otherwise both publish (harmless but noisy).
        await repository.lock_publishing(conn)
        last = await repository.published_versions(conn, list(names.values()))
        for topic, version, messages in batches:
            name = names[topic.name]
            if not needs_publish(last.get(name), version):
                continue
            await publish_many(broker, settings, messages)
            await repository.record_published(conn, name, version, len(messages), now)
            log.info(
                "catalog published",
                extra={"topic": name, "data_version": version, "items": len(messages)},
            )
            published.append(name)
    return published


async def resync_loop(sync: Callable[[], Awaitable[object]], every_s: float) -> None:
    """Check again every ``every_s`` seconds until cancelled; a failure is retried next time."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await sync()
        except Exception as exc:  # Kafka or PostgreSQL away: the next check tries again
            log.warning("catalog publish check failed", extra={"error": repr(exc)})
