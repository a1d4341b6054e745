"""SQL spans from asyncpg's query logger, and the consumer-lag gauge."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from aiokafka import TopicPartition
from asyncpg.connection import LoggedQuery
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from gpux_platform.broker import observe_lag
from gpux_platform.metrics import CONSUMER_LAG
from gpux_platform.telemetry import trace_queries


class Connection:
    """Just enough of asyncpg.Connection to catch the logger the pool init installs."""

    def __init__(self) -> None:
        self.loggers: list[Callable[[LoggedQuery], None]] = []

    def add_query_logger(self, callback: Callable[[LoggedQuery], None]) -> None:
        self.loggers.append(callback)


def query(text: str, exception: BaseException | None = None) -> LoggedQuery:
    params = SimpleNamespace(database="gpux")
    return LoggedQuery(text, (), None, 0.002, exception, ("127.0.0.1", 5432), params)


async def logger(provider: TracerProvider) -> Callable[[LoggedQuery], None]:
    conn = Connection()
    await trace_queries(provider)(conn)
    return conn.loggers[0]


async def test_a_statement_in_a_trace_is_a_client_span_under_the_current_span() -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    record = await logger(provider)
    with provider.get_tracer("test").start_as_current_span("handler") as parent:
        record(query("  insert into billing.holds VALUES ($1)"))
        record(query("SELECT 1/0", ZeroDivisionError()))
    insert, failed, handler = spans.get_finished_spans()
    assert handler.name == "handler"
    assert insert.name == "INSERT"
    assert insert.kind is SpanKind.CLIENT
    assert insert.parent is not None
    assert insert.parent.span_id == parent.get_span_context().span_id
    assert insert.attributes == {
        "db.system.name": "postgresql",
        "db.namespace": "gpux",
        "db.operation.name": "INSERT",
        "db.query.text": "  insert into billing.holds VALUES ($1)",
    }
    assert insert.end_time is not None
    assert insert.start_time is not None
    assert insert.end_time - insert.start_time == 2_000_000
    assert failed.status.status_code is StatusCode.ERROR


async def test_a_statement_outside_any_trace_is_not_recorded() -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    (await logger(provider))(query("SELECT seq FROM pricing.outbox"))
    assert spans.get_finished_spans() == ()


def message(consumer: Any, offset: int = 41) -> Any:
    record = SimpleNamespace(topic="unit.market.trades", partition=2, offset=offset)
    return SimpleNamespace(raw_message=record, consumer=consumer)


def lag() -> float:
    value: float = CONSUMER_LAG.labels("unit.market.trades", "2")._value.get()
    return value


def test_consumer_lag_is_the_high_watermark_after_the_record() -> None:
    class Consumer:
        def highwater(self, tp: TopicPartition) -> int | None:
            assert tp == TopicPartition("unit.market.trades", 2)
            return 50

    observe_lag(message(Consumer()))
    assert lag() == 8  # offsets 42..49 are still to come
    observe_lag(message(Consumer(), offset=49))
    assert lag() == 0


def test_consumer_lag_is_left_alone_without_a_watermark_or_partition() -> None:
    class Unfetched:
        def highwater(self, tp: TopicPartition) -> int | None:
            return None

    class Revoked:
        def highwater(self, tp: TopicPartition) -> int | None:
            raise AssertionError("Partition is not assigned")

    observe_lag(message(Unfetched(), offset=49))
    observe_lag(message(Revoked(), offset=49))
    observe_lag(message(SimpleNamespace()))  # a test broker's fake consumer
    assert lag() == 0
