"""Feeds the catalog view from Kafka: a subscriber without a consumer group, from earliest.

Why no group: every gateway replica needs the whole catalog (a few dozen records), not a
share of the partitions, and has nothing to commit: the view lives in memory and is
rebuilt from the earliest offset at every start, like a Kafka Streams global table. A
group would split the partitions between replicas and resume from committed offsets,
so a restarted replica would start with an empty view.
"""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, TopicPartition
from faststream import AckPolicy
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_common.settings import GpuxSettings
from gpux_common.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_gateway.readmodels.catalog import CatalogView, Partition


def catalog_view(settings: GpuxSettings) -> CatalogView:
    """An empty view of this namespace's catalog topics."""
    return CatalogView(settings.topic(CATALOG_GPUS), settings.topic(CATALOG_MODELS))


def catalog_router(view: CatalogView) -> KafkaRouter:
    """The subscriber that applies every catalog record to ``view``."""
    router = KafkaRouter()

    # No group, so nothing to commit: MANUAL keeps faststream from trying (aiokafka refuses
    # commits without a group). The handler never raises on bad data; see CatalogView.apply.
    @router.subscriber(
        *view.topics,
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.MANUAL,
        title="gateway-catalog-view",
        description="Rebuilds the gateway's in-memory catalog (no consumer group).",
    )
    async def on_catalog_record(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # not a batch subscriber
        view.apply(record.topic, record.partition, record.offset, record.key, record.value)

    return router


async def load_end_offsets(settings: GpuxSettings, view: CatalogView) -> None:
    """Tell the view where each catalog partition ends now, so it knows when it caught up."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        request_timeout_ms=int(settings.connect_timeout_s * 1000) + 10_000,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        await consumer.topics()  # fetches the metadata partitions_for_topic reads
        partitions = [
            TopicPartition(topic, partition)
            for topic in view.topics
            for partition in sorted(consumer.partitions_for_topic(topic) or ())
        ]
        ends = await consumer.end_offsets(partitions) if partitions else {}
    finally:
        await consumer.stop()
    offsets: dict[Partition, int] = {(tp.topic, tp.partition): end for tp, end in ends.items()}
    view.set_end_offsets(offsets)
