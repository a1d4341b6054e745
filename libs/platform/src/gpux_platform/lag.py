"""Consumer lag read from the broker: for each consumer group of a process and each partition
of its topics, the partition's end offset minus the group's committed offset.

The reading does not depend on records arriving: a consumer that stopped (a crash loop, a
hung handler, a group with no member) keeps its committed offsets while producers go on, so
its ``gpux_consumer_lag`` rises. A partition the group never committed counts from its
beginning offset (gpux subscribers start from the earliest).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from gpux_platform.metrics import CONSUMER_LAG
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.lag")


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """One partition's lag for one group."""

    group: str
    topic: str
    partition: int
    lag: int


def subscribed_groups(subscribers: Iterable[object]) -> dict[str, list[str]]:
    """Each consumer group of a broker's subscribers → the topics it reads (physical names)."""
    groups: dict[str, list[str]] = {}
    for subscriber in subscribers:
        group = getattr(subscriber, "group_id", None)
        topics = getattr(subscriber, "topic_names_for_subscribe", None) or []
        if group:
            known = groups.setdefault(str(group), [])
            known.extend(t for t in topics if t not in known)
    return {group: topics for group, topics in groups.items() if topics}


class GroupLagMonitor:
    """Reads the groups' lag from Kafka (an admin client and a consumer of no group) and sets
    ``gpux_consumer_lag{group,topic,partition}``.

    Connected on the first reading; a reading that fails is logged once, the gauge keeps its
    last values, and the next reading connects again.
    """

    def __init__(self, settings: GpuxSettings, groups: Mapping[str, Sequence[str]]) -> None:
        self._bootstrap = settings.kafka_bootstrap
        self._timeout_ms = int(settings.connect_timeout_s * 1000) + 10_000
        self._interval_s = settings.consumer_lag_interval_s
        self._groups = {group: list(topics) for group, topics in groups.items()}
        self._clients: tuple[AIOKafkaAdminClient, AIOKafkaConsumer] | None = None
        self._failing = False

    async def measure(self) -> list[PartitionLag]:
        """Read every group's lag now and set the gauge; returns what was read."""
        read = await self.read()
        for found in read:
            CONSUMER_LAG.labels(found.group, found.topic, str(found.partition)).set(found.lag)
        return read

    async def read(self) -> list[PartitionLag]:
        """Read every group's lag now (the gauge untouched); a failure raises (KafkaError,
        OSError, TimeoutError) and leaves the clients to ``close``."""
        admin, consumer = await self._connect()
        topics = sorted({t for topics in self._groups.values() for t in topics})
        partitions = await self._partitions(admin, topics)
        every = [tp for t in topics for tp in partitions.get(t, [])]
        if not every:
            return []
        ends = await consumer.end_offsets(every)
        starts = await consumer.beginning_offsets(every)
        read: list[PartitionLag] = []
        for group, group_topics in self._groups.items():
            mine = [tp for t in group_topics for tp in partitions.get(t, [])]
            if not mine:
                continue
            committed = await admin.list_consumer_group_offsets(group, partitions=mine)
            for tp in mine:
                meta = committed.get(tp)
                offset = meta.offset if meta is not None and meta.offset >= 0 else starts[tp]
                read.append(PartitionLag(group, tp.topic, tp.partition, max(0, ends[tp] - offset)))
        return read

    async def run(self) -> None:
        """Measure every ``consumer_lag_interval_s`` until cancelled."""
        try:
            while True:
                await self._measure_or_log()
                await asyncio.sleep(self._interval_s)
        finally:
            await self.close()

    async def _measure_or_log(self) -> None:
        try:
            await self.measure()
        except (KafkaError, OSError, TimeoutError) as exc:
            if not self._failing:
                log.warning("consumer lag not read from Kafka", extra={"error": repr(exc)})
            self._failing = True
            await self.close()
            return
        self._failing = False

    @staticmethod
    async def _partitions(
        admin: AIOKafkaAdminClient, topics: list[str]
    ) -> dict[str, list[TopicPartition]]:
        described = await admin.describe_topics(topics)
        return {
            found["topic"]: sorted(
                TopicPartition(found["topic"], part["partition"]) for part in found["partitions"]
            )
            for found in described
            if found["error_code"] == 0  # 3: unknown topic (none yet)
        }

    async def _connect(self) -> tuple[AIOKafkaAdminClient, AIOKafkaConsumer]:
        if self._clients is not None:
            return self._clients
        admin = AIOKafkaAdminClient(
            bootstrap_servers=self._bootstrap, request_timeout_ms=self._timeout_ms
        )
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            request_timeout_ms=self._timeout_ms,
            enable_auto_commit=False,
        )
        self._clients = (admin, consumer)  # set first: a failed start is closed by close()
        await admin.start()
        await consumer.start()
        return self._clients

    async def close(self) -> None:
        """Close the clients (the next reading connects again)."""
        if self._clients is None:
            return
        admin, consumer = self._clients
        self._clients = None
        try:
            await consumer.stop()
        finally:
            await admin.close()
