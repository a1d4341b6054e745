"""Publish to a service's input topics as its peers would, and read what services published."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import OffsetAndMetadata

from gpux_contracts.events import Envelope, EventCodec, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.topics import Topic
from gpux_platform.broker import Outgoing, make_broker, publish_many
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings


async def committed_offsets(
    settings: GpuxSettings, group: str
) -> dict[TopicPartition, OffsetAndMetadata]:
    """What consumer group ``group`` (its name before the namespace) has committed, by
    partition (a negative offset: nothing yet)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        offsets: dict[TopicPartition, OffsetAndMetadata] = await admin.list_consumer_group_offsets(
            settings.group(group)
        )
        return offsets
    finally:
        await admin.close()


async def publish(
    settings: GpuxSettings, topic: Topic, items: Sequence[tuple[str, Envelope[Any]]]
) -> None:
    """Publish ``(key, envelope)`` pairs to ``topic`` in order; return once all are acked."""
    broker = make_broker(settings, "test")
    await broker.start()
    try:
        await publish_many(broker, settings, [Outgoing(topic, k, e) for k, e in items])
    finally:
        await broker.stop()


async def publish_payloads(
    settings: GpuxSettings, topic: Topic, producer: str, items: Sequence[tuple[str, Payload]]
) -> None:
    """Publish ``(key, payload)`` pairs as ``producer`` would have, all occurring now."""
    now = SystemClock().now()
    envelopes = [(k, wrap(p, producer=producer, occurred_at=now)) for k, p in items]
    await publish(settings, topic, envelopes)


async def records_to_end(
    settings: GpuxSettings, topic: Topic, timeout_s: float = 30
) -> list[ConsumerRecord]:
    """Every record of ``topic``, in order per partition, read up to its end offsets.

    Reads in a group of its own (so the assignment tells which partitions to wait for) from
    the earliest offset; fails after ``timeout_s``.
    """
    consumer = AIOKafkaConsumer(
        settings.topic(topic),
        bootstrap_servers=settings.kafka_bootstrap,
        group_id=settings.group(f"test-{new_id()}"),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    found: list[ConsumerRecord] = []
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                batches = await consumer.getmany(timeout_ms=200)
                found += [record for batch in batches.values() for record in batch]
                parts: set[TopicPartition] = consumer.assignment()
                if parts:
                    ends = await consumer.end_offsets(list(parts))
                    positions = [await consumer.position(tp) for tp in parts]
                    if all(pos >= ends[tp] for pos, tp in zip(positions, parts, strict=True)):
                        return found
    finally:
        await consumer.stop()


async def read_to_end(
    settings: GpuxSettings, topic: Topic, codec: EventCodec[Any], producer: str
) -> list[Any]:
    """Every payload ``producer`` published on ``topic``, in order (``records_to_end``)."""
    envelopes = [codec.decode(r.value) for r in await records_to_end(settings, topic)]
    return [e.payload for e in envelopes if e.producer == producer]


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
    *,
    at_least: int = 1,
) -> list[Published]:
    """The matching records, once ``at_least`` were found and none arrived for ``settle_s``.

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
            if len(found) >= at_least and not records:
                quiet_since = quiet_since or loop.time()
                if loop.time() - quiet_since > settle_s:
                    break
    finally:
        await consumer.stop()
    return found
