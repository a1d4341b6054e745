"""The outbox relay and the compacted-topic reader on real Kafka and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import OutOfOrderSequenceNumber

from gpux_contracts.events import TYPE_HEADER, VERSION_HEADER, Envelope, TraceContext, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.waiting import eventually
from gpux_platform import outbox
from gpux_platform.broker import (
    Outgoing,
    encode,
    ensure_topics,
    kafka_producer,
    make_broker,
    publish_many,
)
from gpux_platform.compacted import CompactedView, load_end_offsets, view_router
from gpux_platform.metrics import EVENTS_PUBLISHED
from gpux_platform.outbox import OutboxRelay
from gpux_platform.settings import GpuxSettings
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "relaytest"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def topic(name: str) -> Topic:
    return Topic(name, "ping id", 1, Cleanup.DELETE, "a test's own", payloads=(PingSent,))


def pings(count: int) -> list[Envelope[PingSent]]:
    parent = TraceContext(traceparent=f"00-{TRACE_ID}-b7ad6b7169203331-01")
    now = datetime.now(UTC)
    return [
        wrap(PingSent(ping_id=f"p{n}"), producer="test", occurred_at=now, trace=parent)
        for n in range(count)
    ]


@pytest.fixture
async def pool(gpux_settings: GpuxSettings, tmp_path: Path) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(gpux_settings, SCHEMA, tmp_path) as pool:
        await pool.execute(f"TRUNCATE {SCHEMA}.outbox")
        yield pool


async def read_all(settings: GpuxSettings, name: str, count: int) -> list[ConsumerRecord[Any, Any]]:
    consumer = AIOKafkaConsumer(
        name,
        bootstrap_servers=settings.kafka_bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    records: list[ConsumerRecord[Any, Any]] = []
    try:
        async with asyncio.timeout(30):
            while len(records) < count:
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    records.extend(batch)
    finally:
        await consumer.stop()
    return records


def published(name: str) -> float:
    return float(EVENTS_PUBLISHED.labels(name, PingSent.event_type)._value.get())


async def test_the_relay_publishes_committed_rows_in_order_once_woken(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool
) -> None:
    where = topic("relaytest.pings")
    await ensure_topics(gpux_settings, [where])
    before = published(where.name)
    broker = make_broker(gpux_settings, "relay-test")
    await broker.start()
    relay = OutboxRelay(pool, broker, gpux_settings, SCHEMA)
    running = asyncio.ensure_future(relay.run())
    events = pings(5)
    try:
        async with PostgresUnitOfWork(pool, SCHEMA) as uow:  # committed after the relay waits
            uow.outbox.add(*(Outgoing(where, e.payload.ping_id, e) for e in events))
            await uow.commit()

        async def left() -> int:
            count: int = await pool.fetchval(
                f"SELECT count(*) FROM {SCHEMA}.outbox WHERE published_at IS NULL"
            )
            return count

        await eventually(left, lambda n: n == 0, what="the rows published (NOTIFY)")
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await broker.stop()
    records = await read_all(gpux_settings, gpux_settings.topic(where), 5)
    assert [r.value for r in records] == [encode(e) for e in events]
    assert [r.key for r in records] == [e.payload.ping_id.encode() for e in events]
    headers = dict(records[0].headers)
    assert headers[TYPE_HEADER] == PingSent.event_type.encode()
    assert headers[VERSION_HEADER] == b"1"
    assert headers["content-type"] == b"application/json"
    assert headers["traceparent"].decode().split("-")[1] == TRACE_ID  # the event's own trace
    assert published(where.name) - before == 5


class HeldProducer:
    """A broker's producer whose sends wait until ``release`` is set: a relay caught mid-batch
    (its broker slow, or down and coming back)."""

    def __init__(self, producer: Any, release: asyncio.Event) -> None:
        self._producer = producer
        self._release = release

    async def send(self, *args: Any, **kwargs: Any) -> Any:
        await self._release.wait()
        return await self._producer.send(*args, **kwargs)


async def test_a_second_relay_of_the_outbox_never_publishes_past_rows_the_first_holds(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = topic("relaytest.turns")
    await ensure_topics(gpux_settings, [where])
    held, free = make_broker(gpux_settings, "relay-held"), make_broker(gpux_settings, "relay-free")
    await held.start()
    await free.start()
    release = asyncio.Event()
    real = kafka_producer

    def producer(broker: Any) -> Any:
        return HeldProducer(real(broker), release) if broker is held else real(broker)

    monkeypatch.setattr(outbox, "kafka_producer", producer)
    first, then = pings(2)  # one key: an order, then its cancel
    try:
        async with PostgresUnitOfWork(pool, SCHEMA) as uow:
            uow.outbox.add(Outgoing(where, "one key", first))
            await uow.commit()
        stuck = asyncio.ensure_future(
            OutboxRelay(pool, held, gpux_settings, SCHEMA).publish_pending()
        )
        await eventually(lambda: _rows_locked(pool), bool, what="the first relay holds its batch")
        async with PostgresUnitOfWork(pool, SCHEMA) as uow:
            uow.outbox.add(Outgoing(where, "one key", then))
            await uow.commit()
        other = asyncio.ensure_future(
            OutboxRelay(pool, free, gpux_settings, SCHEMA).publish_pending()
        )
        # The second relay either waits its turn or (the defect) publishes the later row now.
        await eventually(
            lambda: _waiting_or_done(pool, other), bool, what="the second relay waits or is done"
        )
        release.set()
        assert await stuck == 1
        assert await other == 1
    finally:
        release.set()
        await held.stop()
        await free.stop()
    records = await read_all(gpux_settings, gpux_settings.topic(where), 2)
    assert [r.value for r in records] == [encode(first), encode(then)]


async def test_a_relay_whose_producer_lost_a_sequence_number_publishes_on_its_next_try(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool
) -> None:
    """aiokafka can number a batch it then fails unsent (``gpux_platform.producer_ids``); the
    broker refuses every later batch of that partition from that producer id. The relay's
    failed try gives the producer a new id, so its next try publishes."""
    where = topic(f"relaytest.gap-{new_id()}")  # a topic of this run's own (a rerun too)
    await ensure_topics(gpux_settings, [where])
    name = gpux_settings.topic(where)
    broker = make_broker(gpux_settings, "relay-gap")
    await broker.start()
    events = pings(3)
    try:
        producer = kafka_producer(broker)
        await (await producer.send(name, b"first"))  # the broker knows the id's numbering
        producer._txn_manager.increment_sequence_number(TopicPartition(name, 0), 1)  # the gap
        async with PostgresUnitOfWork(pool, SCHEMA) as uow:
            uow.outbox.add(*(Outgoing(where, e.payload.ping_id, e) for e in events))
            await uow.commit()
        relay = OutboxRelay(pool, broker, gpux_settings, SCHEMA)
        with pytest.raises(OutOfOrderSequenceNumber):
            await relay.publish_pending()
        assert await relay.publish_pending() == 3
    finally:
        await broker.stop()
    records = await read_all(gpux_settings, name, 4)
    assert [r.value for r in records][1:] == [encode(e) for e in events]


async def _rows_locked(pool: asyncpg.Pool) -> bool:
    """Whether some transaction holds an advisory lock or a row lock on the outbox."""
    held: int = await pool.fetchval(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
        " WHERE l.granted AND a.state = 'idle in transaction'"
    )
    return held > 0


async def _waiting_or_done(pool: asyncpg.Pool, task: asyncio.Future[int]) -> bool:
    waiting: int = await pool.fetchval("SELECT count(*) FROM pg_locks WHERE NOT granted")
    return task.done() or waiting > 0


class Seen(CompactedView):
    def __init__(self, *topics: str) -> None:
        super().__init__(*topics)
        self.records: list[tuple[int, bytes | None]] = []

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        self._read(topic, partition, offset)
        self.records.append((offset, key))


async def test_a_view_reads_its_topic_whole_in_order_without_a_group(
    gpux_settings: GpuxSettings,
) -> None:
    where = topic("relaytest.view")
    await ensure_topics(gpux_settings, [where])
    sender = make_broker(gpux_settings, "view-sender")
    await sender.start()
    events = pings(40)
    await publish_many(
        sender, gpux_settings, [Outgoing(where, f"k{i}", e) for i, e in enumerate(events)]
    )
    await sender.stop()
    view = Seen(gpux_settings.topic(where))
    await load_end_offsets(gpux_settings, view)
    assert not view.ready
    receiver = make_broker(gpux_settings, "view-receiver")
    receiver.include_router(view_router(view, title="test-view", description="a test's view"))
    await receiver.start()
    try:
        await eventually(lambda: view.ready, what="the view to read its topic whole")
    finally:
        await receiver.stop()
    assert view.records == [(i, f"k{i}".encode()) for i in range(40)]
