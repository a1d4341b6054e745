"""Reading compacted topics whole: a subscriber without a consumer group, from the earliest offset.

Why no group: every replica needs the whole state (the latest record per key, a few records
per key space), not a share of the partitions, and has nothing to commit: the state lives in
memory and is rebuilt from the earliest offset at every start, like a Kafka Streams global
table. A group would split the partitions between replicas and resume from committed
offsets, so a restarted replica would start with an empty view. With no group there is
nothing to commit: MANUAL keeps faststream from trying (aiokafka refuses commits without a
group).

Readiness: ``end_offsets`` gives each partition's end offset as of start-up; a
``CompactedView`` is ready once it has read up to all of them (an empty topic is read at
once), so nothing answers from a half-read topic after a restart.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from faststream import AckPolicy, StreamMessage
from faststream.kafka import KafkaRouter

from gpux_platform.broker import batch_subscriber
from gpux_platform.settings import GpuxSettings

Partition = tuple[str, int]
"""(physical topic name, partition)."""

RecordHandler = Callable[[ConsumerRecord], Awaitable[None]]
MAX_RECORDS = 1000
"""Records handed over per poll (in order, one ``handle`` each)."""
log = logging.getLogger("gpux.compacted")


class CompactedView(ABC):
    """Base of an in-memory view of compacted topics: how far each partition was read."""

    def __init__(self, *topics: str) -> None:
        self.topics = topics
        """The physical names of the topics the view reads."""
        self._positions: dict[Partition, int] = {}
        self._ends: dict[Partition, int] | None = None
        self.rejected = 0
        """Records skipped as unreadable or misplaced (each one logged)."""

    @property
    def ready(self) -> bool:
        """True once every partition was read up to its end offset at start-up."""
        if self._ends is None:
            return False
        return all(self._positions.get(p, 0) >= end for p, end in self._ends.items())

    def set_end_offsets(self, ends: Mapping[Partition, int]) -> None:
        """Record where each partition ended when the process started."""
        self._ends = dict(ends)

    @abstractmethod
    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record into the view (never raises on bad data; calls ``_read`` first)."""

    def _reject(self, topic: str, offset: int, reason: str) -> None:
        """Skip a record the view cannot take: count it and log why."""
        self.rejected += 1
        extra = {"view": type(self).__name__, "topic": topic, "offset": offset, "why": reason}
        log.warning("record skipped", extra=extra)

    def _read(self, topic: str, partition: int, offset: int) -> None:
        at = (topic, partition)
        self._positions[at] = max(self._positions.get(at, 0), offset + 1)


def subscribe_whole(
    router: KafkaRouter,
    topics: Iterable[str],
    *,
    title: str,
    description: str,
    handle: RecordHandler,
) -> None:
    """Add a subscriber to ``router`` that hands ``handle`` every record of ``topics``,
    from the earliest offset, without a group (``handle`` must not raise on bad data).

    The records come in batches (what each fetch brought), one faststream dispatch per batch
    rather than per record; ``handle`` still takes them one by one, in order.
    """

    @batch_subscriber(
        router,
        *topics,
        max_records=MAX_RECORDS,
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.MANUAL,
        title=title,
        description=description,
    )
    async def on_records(message: StreamMessage[Any]) -> None:
        records = message.raw_message
        for record in records if isinstance(records, tuple) else (records,):
            await handle(record)


def view_router(view: CompactedView, *, title: str, description: str) -> KafkaRouter:
    """The subscriber that applies every record of the view's topics to ``view``."""
    router = KafkaRouter()

    async def take(record: ConsumerRecord) -> None:
        view.apply(record.topic, record.partition, record.offset, record.key, record.value)

    subscribe_whole(router, view.topics, title=title, description=description, handle=take)
    return router


async def end_offsets(settings: GpuxSettings, topics: Iterable[str]) -> dict[Partition, int]:
    """Where each partition of ``topics`` ends now (a topic that does not exist: none)."""
    timeout_ms = int(settings.connect_timeout_s * 1000) + 10_000
    partitions = await _partitions(settings, list(topics), timeout_ms)
    if not partitions:
        return {}
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        request_timeout_ms=timeout_ms,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        ends = await consumer.end_offsets(partitions)
    finally:
        await consumer.stop()
    return {(tp.topic, tp.partition): end for tp, end in ends.items()}


async def _partitions(
    settings: GpuxSettings, topics: list[str], timeout_ms: int
) -> list[TopicPartition]:
    """The partitions of the topics that exist, from the broker's metadata.

    Asked of the admin client: a consumer's ``topics()`` fetches the metadata into a copy,
    so its ``partitions_for_topic`` knew no topic and every view counted as read at once.
    """
    if not topics:
        return []
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=timeout_ms
    )
    await admin.start()
    try:
        described = await admin.describe_topics(topics)
    finally:
        await admin.close()
    return sorted(
        TopicPartition(found["topic"], part["partition"])
        for found in described
        if found["error_code"] == 0  # 3: unknown topic (none yet)
        for part in found["partitions"]
    )


async def load_end_offsets(settings: GpuxSettings, view: CompactedView) -> None:
    """Tell the view where each partition ends now, so it knows when it caught up."""
    view.set_end_offsets(await end_offsets(settings, view.topics))
