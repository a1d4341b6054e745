"""Read what services published: every record of a topic that matches, from the start."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer

from gpux_common.settings import GpuxSettings
from gpux_common.topics import Topic


class Published(NamedTuple):
    """One record: its key and its decoded envelope."""

    key: str
    body: dict[str, Any]


async def published(
    settings: GpuxSettings,
    topic: Topic,
    match: Callable[[dict[str, Any]], bool],
    settle_s: float = 2.0,
    timeout_s: float = 20.0,
) -> list[Published]:
    """The matching records, once some were found and none arrived for ``settle_s``.

    Reads without a consumer group from the earliest offset, so it sees records that were
    published before it started; gives up after ``timeout_s`` with what it found.
    """
    consumer = AIOKafkaConsumer(
        settings.topic(topic),
        bootstrap_servers=settings.kafka_bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        group_id=None,
    )
    await consumer.start()
    found: list[Published] = []
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        quiet_since: float | None = None
        while loop.time() < deadline:
            batch = await consumer.getmany(timeout_ms=500)
            records = [r for rs in batch.values() for r in rs]
            for record in records:
                body = json.loads(record.value)
                if match(body):
                    found.append(Published(record.key.decode() if record.key else "", body))
            if found and not records:
                quiet_since = quiet_since or loop.time()
                if loop.time() - quiet_since > settle_s:
                    break
    finally:
        await consumer.stop()
    return found
