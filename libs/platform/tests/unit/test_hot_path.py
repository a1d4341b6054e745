"""The hot path's plumbing: batch subscribers that wake on arrival, spans only where they go,
one server span per HTTP request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from aiokafka import TopicPartition
from fastapi import FastAPI
from faststream.kafka import KafkaRouter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from gpux_platform import broker
from gpux_platform.broker import (
    IDLE_POLL_MS,
    WakingBatchSubscriber,
    batch_subscriber,
    whole_message,
)
from gpux_platform.metrics import HTTP_SECONDS
from gpux_platform.service import trace_requests
from gpux_platform.settings import GpuxSettings
from gpux_platform.telemetry import current_trace, make_tracer_provider

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


class Consumer:
    """Just enough of AIOKafkaConsumer: each getmany returns the next answer, the clock moves."""

    def __init__(self, clock: list[float], *answers: tuple[dict[Any, list[Any]], float]) -> None:
        self.clock = clock
        self.answers = list(answers)
        self.polls: list[tuple[int, int | None]] = []

    async def getmany(self, *, timeout_ms: int, max_records: int | None) -> dict[Any, list[Any]]:
        self.polls.append((timeout_ms, max_records))
        records, took_s = self.answers.pop(0)
        self.clock[0] += took_s
        return records


def subscriber(*topics: str, **poll: int) -> WakingBatchSubscriber:
    router = KafkaRouter()

    async def consume(message: Any) -> None:
        return None

    batch_subscriber(router, *topics, max_records=7, group_id="g", **poll)(consume)
    (found,) = router.subscribers
    assert isinstance(found, WakingBatchSubscriber)
    return found


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(broker, "monotonic", lambda: now[0])
    return now


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(broker, "sleep", sleep)
    return slept


async def test_a_batch_subscriber_hands_over_what_one_poll_brought_in_partition_order(
    clock: list[float], sleeps: list[float]
) -> None:
    sub = subscriber("t", poll_ms=100)
    first, second = TopicPartition("t", 0), TopicPartition("t", 1)
    consumer = Consumer(clock, ({first: ["a", "b"], second: ["c"]}, 0.001))
    assert await sub.get_msg(consumer) == ("a", "b", "c")
    assert consumer.polls == [(100, 7)]
    assert sleeps == []


@pytest.mark.parametrize(
    ("took_s", "slept"),
    [
        # An idle poll is followed by the next at once: faststream's own batch subscriber
        # sleeps batch_timeout_ms after every empty poll.
        (0.1, []),
        # A poll that came back empty early waits out its time: never a busy loop.
        (0.025, [pytest.approx(0.075)]),
    ],
    ids=["idle-poll-polls-again-at-once", "early-empty-poll-waits-out-its-time"],
)
async def test_an_empty_poll_is_followed_by_the_next_once_its_time_is_up(
    clock: list[float], sleeps: list[float], took_s: float, slept: list[float]
) -> None:
    sub = subscriber("t", poll_ms=100)
    consumer = Consumer(clock, ({}, took_s))
    assert await sub.get_msg(consumer) == ()
    assert sleeps == slept


async def test_the_handler_gets_the_message_itself_and_an_idle_poll_is_long() -> None:
    message: Any = SimpleNamespace(raw_message=("r",))
    assert await whole_message(message) is message  # no Context, no worker thread
    sub = subscriber("t", "u")
    assert sub.batch_timeout_ms == IDLE_POLL_MS


def test_nothing_is_recorded_where_no_span_would_ever_be_read() -> None:
    silent = make_tracer_provider("unit", GpuxSettings(), environ={"OTEL_TRACES_EXPORTER": "none"})
    with silent.get_tracer("t").start_as_current_span("work") as span:
        assert not span.is_recording()
        assert span.get_span_context().is_valid  # ids are still made (envelopes, logs)
    spans = InMemorySpanExporter()
    heard = make_tracer_provider("unit", GpuxSettings(), SimpleSpanProcessor(spans), environ={})
    with heard.get_tracer("t").start_as_current_span("work") as span:
        assert span.is_recording()
    assert [s.name for s in spans.get_finished_spans()] == ["work"]


@pytest.fixture
async def traced() -> AsyncIterator[tuple[httpx.AsyncClient, InMemorySpanExporter]]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    app = FastAPI()
    trace_requests(app, provider)

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    @app.get("/metrics")
    async def scrape() -> str:
        return ""

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("boom")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client, spans


async def test_a_request_is_one_server_span_in_the_callers_trace(
    traced: tuple[httpx.AsyncClient, InMemorySpanExporter],
) -> None:
    client, spans = traced
    count = HTTP_SECONDS.labels("GET", "/items/{item_id}", "200")._sum
    before = count.get()
    parent = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
    answer = await client.get("/items/42", headers={"traceparent": parent})
    assert answer.json() == {"id": "42"}
    (span,) = spans.get_finished_spans()  # one span: none per ASGI message
    assert span.name == "GET /items/{item_id}"  # the route template, not the path
    assert span.kind is SpanKind.SERVER
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "opentelemetry.instrumentation.fastapi"
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None
    assert format(span.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert span.attributes is not None
    assert span.attributes["http.route"] == "/items/{item_id}"
    assert span.attributes["http.status_code"] == 200
    assert count.get() > before  # labelled by the route template, not the path


async def test_probes_and_scrapes_make_no_span(
    traced: tuple[httpx.AsyncClient, InMemorySpanExporter],
) -> None:
    client, spans = traced
    assert (await client.get("/metrics")).status_code == 200
    assert spans.get_finished_spans() == ()


async def test_a_request_that_fails_is_a_failed_span(
    traced: tuple[httpx.AsyncClient, InMemorySpanExporter],
) -> None:
    client, spans = traced
    answer = await client.get("/broken")
    assert answer.status_code == 500
    (span,) = spans.get_finished_spans()
    assert span.name == "GET /broken"
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"]


async def test_where_nothing_is_recorded_a_request_still_carries_the_callers_trace_id() -> None:
    silent = make_tracer_provider("unit", GpuxSettings(), environ={})
    app = FastAPI()
    trace_requests(app, silent)
    seen: list[str | None] = []

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict[str, str]:
        context = current_trace()
        seen.append(context.traceparent if context else None)
        return {"id": item_id}

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        parent = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
        assert (await client.get("/items/1", headers={"traceparent": parent})).status_code == 200
        assert (await client.get("/items/2")).status_code == 200
    continued, fresh = seen
    assert continued is not None
    assert continued.split("-")[1] == TRACE_ID  # the envelopes it writes carry the trace on
    assert fresh is not None
    assert fresh.split("-")[1] != TRACE_ID  # a trace of its own, ids only
