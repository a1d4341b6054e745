"""The plumbing against real Kafka, PostgreSQL and Redis: one hop, one row, one key, one trace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from faststream.kafka import KafkaBroker
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import SMOKE_PINGS, Cleanup, Topic
from gpux_platform import migrations
from gpux_platform.broker import (
    Outgoing,
    ensure_topics,
    make_broker,
    publish_many,
    subscriber_options,
)
from gpux_platform.cache import create_redis
from gpux_platform.clock import SystemClock
from gpux_platform.db import create_pool
from gpux_platform.errors import ConfigError
from gpux_platform.settings import GpuxSettings


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


async def test_typed_event_crosses_kafka_between_two_services_in_one_trace(
    gpux_settings: GpuxSettings,
) -> None:
    await ensure_topics(gpux_settings, [SMOKE_PINGS])
    sender_provider, sender_spans = _provider()
    receiver_provider, receiver_spans = _provider()
    sender = make_broker(gpux_settings, "catalog", sender_provider)
    receiver = make_broker(gpux_settings, "pricing", receiver_provider)
    received: asyncio.Queue[tuple[Envelope[PingSent], int]] = asyncio.Queue()

    @receiver.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        gpux_settings.topic(SMOKE_PINGS), **subscriber_options(gpux_settings, "pricing-smoke")
    )
    async def on_ping(envelope: Envelope[PingSent]) -> None:
        trace_id = trace.get_current_span().get_span_context().trace_id
        await received.put((envelope, trace_id))

    ping = PingSent(ping_id=new_id(), note="hello")
    envelope = wrap(ping, producer="catalog", occurred_at=SystemClock().now())
    await receiver.start()
    await sender.start()
    try:
        tracer = sender_provider.get_tracer("smoke")
        with tracer.start_as_current_span("catalog.send") as span:
            sent_trace_id = span.get_span_context().trace_id
            await publish_many(
                sender, gpux_settings, [Outgoing(SMOKE_PINGS, ping.ping_id, envelope)]
            )
        got, receiver_trace_id = await asyncio.wait_for(received.get(), timeout=30)
    finally:
        await sender.stop()
        await receiver.stop()

    assert got.payload == ping
    assert got.event_id == envelope.event_id
    assert receiver_trace_id == sent_trace_id
    assert any(s.context.trace_id == sent_trace_id for s in receiver_spans.get_finished_spans())
    assert any(s.context.trace_id == sent_trace_id for s in sender_spans.get_finished_spans())


async def test_rows_round_trip_through_migrations(
    gpux_settings: GpuxSettings, tmp_path: Path
) -> None:
    (tmp_path / "0001_things.sql").write_text(
        "CREATE TABLE things (id text PRIMARY KEY, amount_micros bigint NOT NULL);"
    )
    pool = await create_pool(gpux_settings)
    try:
        applied = await migrations.apply(pool, "smoke", tmp_path)
        assert applied == [
            "common/0001_outbox",
            "common/0002_inbox",
            "common/0003_set_aside",
            "0001_things",
        ]
        assert await migrations.apply(pool, "smoke", tmp_path) == []
        await pool.execute("INSERT INTO smoke.things VALUES ($1, $2)", "a", 330_000)
        assert (
            await pool.fetchval("SELECT amount_micros FROM smoke.things WHERE id = 'a'") == 330_000
        )
        (tmp_path / "0001_things.sql").write_text("CREATE TABLE other (id text);")
        with pytest.raises(migrations.MigrationError, match="changed after it was applied"):
            await migrations.apply(pool, "smoke", tmp_path)
    finally:
        await pool.close()


async def test_redis_key_in_the_session_namespace(gpux_settings: GpuxSettings) -> None:
    redis = await create_redis(gpux_settings)
    try:
        key = gpux_settings.redis_key("smoke", "key")
        await redis.set(key, b"value", ex=60)
        assert await redis.get(key) == b"value"
        assert key.startswith(gpux_settings.namespace)
    finally:
        await redis.aclose()


async def test_broker_factory_uses_an_idempotent_all_acks_producer(
    gpux_settings: GpuxSettings,
) -> None:
    broker: KafkaBroker = make_broker(gpux_settings, "smoke")
    await broker.start()
    try:
        # aiokafka keeps these private; an idempotent producer is one with a transaction manager.
        producer = broker.config.producer._producer.producer  # type: ignore[attr-defined]
        assert producer._txn_manager is not None
        assert producer._sender._acks == -1
    finally:
        await broker.stop()


async def test_prod_mode_requires_topics_instead_of_creating_them(
    gpux_settings: GpuxSettings,
) -> None:
    absent = Topic("smoke.absent", "none", 1, Cleanup.DELETE, "never created")
    with pytest.raises(ConfigError, match="topics missing"):
        await ensure_topics(gpux_settings, [absent], create=False)
    await ensure_topics(gpux_settings, [SMOKE_PINGS])
    await ensure_topics(gpux_settings, [SMOKE_PINGS], create=False)
