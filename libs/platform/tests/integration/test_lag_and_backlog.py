"""Consumer lag read from the broker with no consumer running, and the outbox backlog, on
real Kafka and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from gpux_contracts.events import wrap
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import Outgoing, ensure_topics, make_broker
from gpux_platform.lag import GroupLagMonitor, PartitionLag
from gpux_platform.metrics import CONSUMER_LAG, OUTBOX_BACKLOG, OUTBOX_OLDEST_AGE
from gpux_platform.outbox import Backlog, OutboxRelay
from gpux_platform.settings import GpuxSettings
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "backlogtest"
PINGS = Topic("lagtest.pings", "ping id", 2, Cleanup.DELETE, "a test's own", payloads=(PingSent,))


async def produce(settings: GpuxSettings, name: str, partition: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap)
    await producer.start()
    try:
        for n in range(count):
            await producer.send_and_wait(name, f"r{n}".encode(), partition=partition)
    finally:
        await producer.stop()


async def commit(settings: GpuxSettings, group: str, offsets: dict[TopicPartition, int]) -> None:
    """Commit offsets for ``group`` as its consumer would have, then leave (no member left)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign(list(offsets))
        await consumer.commit(offsets)
    finally:
        await consumer.stop()


def gauge(group: str, name: str, partition: int) -> float:
    value: float = CONSUMER_LAG.labels(group, name, str(partition))._value.get()
    return value


async def test_a_stopped_consumers_lag_rises_as_records_arrive(gpux_settings: GpuxSettings) -> None:
    await ensure_topics(gpux_settings, [PINGS])
    name = gpux_settings.topic(PINGS)
    group = gpux_settings.group("lagtest")
    first, second = TopicPartition(name, 0), TopicPartition(name, 1)
    await produce(gpux_settings, name, 0, 3)
    await produce(gpux_settings, name, 1, 2)
    await commit(gpux_settings, group, {first: 3})  # partition 1: never committed
    fast = gpux_settings.model_copy(update={"consumer_lag_interval_s": 0.1})
    monitor = GroupLagMonitor(fast, {group: [name]})
    try:
        read = await monitor.measure()
        assert sorted(read, key=lambda p: p.partition) == [
            PartitionLag(group, name, 0, 0),
            PartitionLag(group, name, 1, 2),  # from the beginning: subscribers start there
        ]
    finally:
        await monitor.close()

    running = asyncio.ensure_future(monitor.run())
    try:
        # No consumer of the group runs: the broker-side reading alone sees the records pile.
        await produce(gpux_settings, name, 0, 4)
        await eventually(
            lambda: gauge(group, name, 0), lambda lag: lag == 4, what="partition 0's lag rises"
        )
        assert gauge(group, name, 1) == 2
        await commit(gpux_settings, group, {first: 7, second: 2})  # the consumer caught up
        await eventually(
            lambda: (gauge(group, name, 0), gauge(group, name, 1)),
            lambda lags: lags == (0, 0),
            what="the lag falls once the group committed",
        )
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running


@pytest.fixture
async def pool(gpux_settings: GpuxSettings, tmp_path: Path) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(gpux_settings, SCHEMA, tmp_path) as pool:
        yield pool


def pings(count: int) -> list[Outgoing]:
    now = datetime.now(UTC)
    return [
        Outgoing(PINGS, f"p{n}", wrap(PingSent(ping_id=f"p{n}"), producer="test", occurred_at=now))
        for n in range(count)
    ]


def backlog_gauges() -> tuple[float, float]:
    rows: float = OUTBOX_BACKLOG.labels(SCHEMA)._value.get()
    age: float = OUTBOX_OLDEST_AGE.labels(SCHEMA)._value.get()
    return rows, age


async def test_the_relay_measures_its_backlog_and_the_oldest_rows_age(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool
) -> None:
    await ensure_topics(gpux_settings, [PINGS])
    broker = make_broker(gpux_settings, "backlog-test")
    relay = OutboxRelay(pool, broker, gpux_settings, SCHEMA, backlog_interval_s=0.1)
    assert await relay.measure_backlog() == Backlog(0, 0.0)
    async with PostgresUnitOfWork(pool, SCHEMA) as uow:
        uow.outbox.add(*pings(3))
        await uow.commit()
    await pool.execute(
        f"UPDATE {SCHEMA}.outbox SET created_at = now() - interval '90 seconds'"
        " WHERE event_id = (SELECT event_id FROM backlogtest.outbox ORDER BY seq LIMIT 1)"
    )
    measured = await relay.measure_backlog()
    assert measured.rows == 3
    assert 90 <= measured.oldest_age_s < 120
    assert backlog_gauges() == (3, measured.oldest_age_s)

    await broker.start()
    running = asyncio.ensure_future(relay.run())  # publishes, and measures every 0.1 s
    try:
        await eventually(backlog_gauges, lambda found: found == (0, 0), what="the backlog gone")
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await broker.stop()
