"""Kafka through faststream: broker factory, subscriber defaults, topic creation, publishing.

Producer: idempotent with ``acks=all``. Consumers: a group id and
``AckPolicy.NACK_ON_ERROR`` on every subscriber, so an offset is committed only
after the handler returned (its effect is durable) and a failing message is
delivered again rather than skipped. faststream's own default acknowledges on
receipt, which is at-most-once; ``subscriber_options`` exists so nobody gets it.

Latency: a record waits for nothing that buys no throughput. The producer does not linger
(``linger_ms=0``: while one request is in flight to the broker the next records gather on
their own, so batching comes from load, not from a timer). ``batch_subscriber`` is woken by
the fetch that brings data (faststream's own sleeps ``batch_timeout_ms`` again after every
empty poll, so a record arriving then waited up to that long) and hands the handler the
message itself (``whole_message``), not through faststream's ``Context``, which fast_depends
resolves in a worker thread: one thread hop per message, ~100 us of CPU and a GIL hand-off.
The consumers' ``fetch_max_wait_ms`` (500) and ``fetch_min_bytes`` (1) stay: the broker
answers a fetch as soon as one byte is there, so the wait only bounds an idle long poll.
"""

from __future__ import annotations

import contextlib
import logging
from asyncio import sleep
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from time import monotonic
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from faststream import AckPolicy, BaseMiddleware, StreamMessage
from faststream.kafka import KafkaBroker, KafkaRouter
from faststream.kafka.opentelemetry import KafkaTelemetryMiddleware
from faststream.kafka.subscriber.usecase import BatchSubscriber
from opentelemetry.trace import TracerProvider
from pydantic import BaseModel

from gpux_contracts.events import Envelope
from gpux_contracts.topics import Topic
from gpux_platform.errors import ConfigError
from gpux_platform.metrics import CONSUMER_LAG
from gpux_platform.producer_ids import confirmed
from gpux_platform.settings import GpuxSettings

ACK_POLICY = AckPolicy.NACK_ON_ERROR


def make_broker(
    settings: GpuxSettings, service: str, tracer_provider: TracerProvider | None = None
) -> KafkaBroker:
    """A faststream Kafka broker with an idempotent acks=all producer and trace propagation."""
    return KafkaBroker(
        settings.kafka_bootstrap,
        client_id=f"gpux-{service}",
        enable_idempotence=True,
        acks="all",
        linger_ms=0,  # no timer: records sent while a request is in flight batch by themselves
        request_timeout_ms=int(settings.connect_timeout_s * 1000) + 10_000,
        ack_policy=ACK_POLICY,
        middlewares=[KafkaTelemetryMiddleware(tracer_provider=tracer_provider), ConsumerLag],
        # faststream logs every message at this level; errors are logged as errors anyway.
        logger=logging.getLogger(f"gpux.{service}.broker"),
        log_level=logging.DEBUG,
    )


class ConsumerLag(BaseMiddleware):
    """Sets ``gpux_consumer_lag`` after every consumed record, from its consumer's high watermark.

    The watermark comes with each fetch, so this costs no request. Between records the gauge
    is kept by the broker's own reading (``gpux_platform.lag``), which also sees a consumer
    that stopped.
    """

    async def consume_scope(self, call_next: Any, msg: StreamMessage[Any]) -> Any:
        try:
            return await call_next(msg)
        finally:
            observe_lag(msg)


def group_of(consumer: object) -> str:
    """The consumer's group id ('' for none)."""
    return str(getattr(consumer, "_group_id", None) or "")


def observe_lag(msg: StreamMessage[Any]) -> None:
    """Record the lag of the message's partition, when the message comes from a real consumer."""
    record = msg.raw_message
    consumer = getattr(msg, "consumer", None)
    highwater = getattr(consumer, "highwater", None)
    if highwater is None or not hasattr(record, "partition"):
        return  # a batch, or a test broker's fake consumer
    try:
        high = highwater(TopicPartition(record.topic, record.partition))
    except AssertionError:  # aiokafka asserts the partition is still ours (a rebalance)
        return
    if high is not None:
        CONSUMER_LAG.labels(group_of(consumer), record.topic, str(record.partition)).set(
            max(high - record.offset - 1, 0)
        )


def observe_batch_lag(msg: StreamMessage[Any]) -> None:
    """Record the lag of each partition of a consumed batch, after its last record."""
    records = msg.raw_message
    consumer = getattr(msg, "consumer", None)
    highwater = getattr(consumer, "highwater", None)
    if highwater is None or not isinstance(records, tuple):
        return
    last: dict[tuple[str, int], int] = {}
    for record in records:
        last[(record.topic, record.partition)] = record.offset
    group = group_of(consumer)
    for (topic, partition), offset in last.items():
        try:
            high = highwater(TopicPartition(topic, partition))
        except AssertionError:  # a rebalance took the partition meanwhile
            continue
        if high is not None:
            CONSUMER_LAG.labels(group, topic, str(partition)).set(max(high - offset - 1, 0))


def subscriber_options(settings: GpuxSettings, group: str) -> dict[str, Any]:
    """Keyword arguments of every gpux subscriber: its group, at-least-once acks, from the start."""
    return {
        "group_id": settings.group(group),
        "ack_policy": ACK_POLICY,
        "auto_offset_reset": "earliest",
    }


async def whole_message(message: StreamMessage[Any]) -> StreamMessage[Any]:
    """A faststream decoder that hands the handler the message itself (records, consumer).

    Async, so faststream awaits it in the loop. A handler taking ``message: StreamMessage[Any]``
    this way needs no ``Context`` (which fast_depends resolves in a worker thread each time).
    """
    return message


class WakingBatchSubscriber(BatchSubscriber):
    """faststream's batch subscriber without the sleep after an empty poll.

    ``getmany`` already waits up to ``batch_timeout_ms`` and returns as soon as a fetch brings
    records; faststream then sleeps ``batch_timeout_ms`` more when it got none, so a record that
    arrives during that sleep waits for it. Here the next poll starts at once; the sleep is kept
    only for a poll that came back empty early (never a busy loop).
    """

    __slots__ = ()

    async def get_msg(self, consumer: AIOKafkaConsumer) -> tuple[ConsumerRecord[Any, Any], ...]:
        started = monotonic()
        messages = await consumer.getmany(
            timeout_ms=self.batch_timeout_ms, max_records=self.max_records
        )
        if not messages:
            left = self.batch_timeout_ms / 1000 - (monotonic() - started)
            if left > 0:
                await sleep(left)
            return ()
        return tuple(chain.from_iterable(messages.values()))


IDLE_POLL_MS = 200
"""How long a ``batch_subscriber`` waits in one poll when nothing arrives (it wakes at once
when something does; only idle wake-ups depend on it)."""


MessageHandler = Callable[[StreamMessage[Any]], Awaitable[None]]


def batch_subscriber(
    router: KafkaRouter,
    *topics: str,
    max_records: int,
    poll_ms: int = IDLE_POLL_MS,
    **options: Any,
) -> Callable[[MessageHandler], object]:
    """A batch subscriber of ``topics`` on ``router`` that wakes when records arrive; decorate
    an ``async def consume(message: StreamMessage[Any])`` with it (``message.raw_message`` is
    the tuple of records, ``message.consumer`` the consumer). ``options`` go to faststream
    (``subscriber_options``, an assignor, a listener, ...)."""
    subscriber = router.subscriber(
        *topics,
        batch=True,
        max_records=max_records,
        batch_timeout_ms=poll_ms,
        decoder=whole_message,
        **options,
    )
    if type(subscriber) is BatchSubscriber:  # the same object, only get_msg differs
        subscriber.__class__ = WakingBatchSubscriber

    def register(handler: MessageHandler) -> object:
        return subscriber(handler)

    return register


def kafka_producer(broker: KafkaBroker) -> AIOKafkaProducer:
    """The started broker's own aiokafka producer (the one ``make_broker`` configured).

    For senders of many records that keep their own spans (the outbox relay): faststream's
    publish path adds a span, a context and middlewares per record, several times the send.
    """
    producer = started_producer(broker)
    if producer is None:
        raise RuntimeError("the broker is not started (no Kafka producer yet)")
    return producer


def started_producer(broker: KafkaBroker) -> AIOKafkaProducer | None:
    """The broker's aiokafka producer, None before it started (or under a test broker)."""
    state = getattr(broker.config.producer, "_producer", None)
    producer = getattr(state, "producer", None)
    return producer if isinstance(producer, AIOKafkaProducer) else None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message to publish: an envelope, its topic and its partition key."""

    topic: Topic
    key: str
    envelope: Envelope[Any]


def encode(model: BaseModel) -> bytes:
    """The JSON bytes of a model, as gpux puts them on Kafka."""
    return model.model_dump_json().encode()


async def publish_many(
    broker: KafkaBroker, settings: GpuxSettings, messages: Sequence[Outgoing]
) -> None:
    """Publish messages pipelined (all sent, then all confirmed), not one round trip each."""
    futures = []
    for message in messages:
        future = await broker.publish(
            encode(message.envelope),
            topic=settings.topic(message.topic),
            key=message.key.encode(),
            headers={**message.envelope.headers(), "content-type": "application/json"},
            no_confirm=True,
        )
        futures.append(future)
    await confirmed(started_producer(broker), futures)  # after a failure: a new producer id


async def ensure_topics(
    settings: GpuxSettings,
    topics: Iterable[Topic],
    replication_factor: int = 1,
    create: bool = True,
) -> None:
    """Create the topics that do not exist yet (or, with ``create=False``, require them)."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap,
        request_timeout_ms=int(settings.connect_timeout_s * 1000),
    )
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # the ConfigError below is the one line a person needs
    try:
        await admin.start()
    except KafkaError as exc:
        raise ConfigError(
            "GPUX_KAFKA_BOOTSTRAP", f"no Kafka broker answers at {settings.kafka_bootstrap} ({exc})"
        ) from exc
    finally:
        quiet.setLevel(level)
    try:
        existing = set(await admin.list_topics())
        if not create:
            missing = sorted(settings.topic(t) for t in topics if settings.topic(t) not in existing)
            if missing:
                raise ConfigError(
                    "GPUX_KAFKA_BOOTSTRAP",
                    f"topics missing on {settings.kafka_bootstrap}: {', '.join(missing)}"
                    " (in prod, topics are created by the platform, e.g. Strimzi KafkaTopics)",
                )
            return
        wanted = [
            NewTopic(settings.topic(t), t.partitions, replication_factor, topic_configs=t.configs())
            for t in topics
            if settings.topic(t) not in existing
        ]
        if wanted:
            # Another process may create them between list and create.
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(wanted)
    finally:
        await admin.close()
