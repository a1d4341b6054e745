"""Consumers and producers survive the broker's restart: a grouped batch subscriber, a
compacted-topic reader (no group) and the producer carry on once a private broker is back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from faststream import StreamMessage
from faststream.kafka import KafkaRouter

from gpux_contracts.events import wrap
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra.testing.stores import PrivateStore
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import (
    Outgoing,
    batch_subscriber,
    ensure_topics,
    make_broker,
    publish_many,
    subscriber_options,
)
from gpux_platform.compacted import view_router
from gpux_platform.settings import GpuxSettings

from .test_relay_and_views import Seen

WHERE = Topic(
    "brokertest.pings", "ping id", 2, Cleanup.DELETE, "a test's own", payloads=(PingSent,)
)


def outgoing(*keys: str) -> list[Outgoing]:
    now = datetime.now(UTC)
    return [
        Outgoing(WHERE, k, wrap(PingSent(ping_id=k), producer="test", occurred_at=now))
        for k in keys
    ]


async def test_consumers_and_the_producer_carry_on_after_the_broker_restarts(
    gpux_settings: GpuxSettings, private_kafka: PrivateStore
) -> None:
    settings = gpux_settings.model_copy(update={"kafka_bootstrap": private_kafka.url})
    await ensure_topics(settings, [WHERE])
    grouped: list[bytes] = []
    router = KafkaRouter()

    @batch_subscriber(
        router, settings.topic(WHERE), max_records=100, **subscriber_options(settings, "g")
    )
    async def consume(message: StreamMessage[Any]) -> None:
        grouped.extend(r.key for r in message.raw_message)

    view = Seen(settings.topic(WHERE))
    broker = make_broker(settings, "broker-restart-test")
    broker.include_router(router)
    broker.include_router(view_router(view, title="t", description="a test's view"))
    await broker.start()
    try:
        await publish_many(broker, settings, outgoing("a", "b"))
        await eventually(lambda: sorted(grouped) == [b"a", b"b"], what="the first records")
        await eventually(lambda: len(view.records) == 2, what="the view's first records")

        await private_kafka.restart()
        await publish_many(broker, settings, outgoing("c", "d"))  # the same producer
        await eventually(
            lambda: {b"c", b"d"} <= set(grouped), what="records after the restart", timeout_s=90
        )
        await eventually(lambda: len(view.records) >= 4, what="the view after the restart")
    finally:
        await broker.stop()
    assert sorted(set(grouped)) == [b"a", b"b", b"c", b"d"]  # at least once, none lost
    assert sorted({key for _, key in view.records if key}) == [b"a", b"b", b"c", b"d"]
