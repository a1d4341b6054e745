"""The batch path on the memory unit of work: one unit per batch, split down to the bad record."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from gpux_contracts.events import Envelope, Payload, TraceContext, wrap
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import SMOKE_PINGS
from gpux_platform.batches import BatchHandler, RetryLater
from gpux_platform.broker import Outgoing
from gpux_platform.unit_of_work import MemoryUnitOfWork

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class PongSent(Payload):
    event_type: ClassVar[str] = "pong.sent"
    schema_version: ClassVar[int] = 1
    ping_id: str


@dataclass
class State:
    notes: list[str] = field(default_factory=list)


class Unit(MemoryUnitOfWork):
    def __init__(self) -> None:
        super().__init__(State())


def ping(n: int, note: str = "") -> Envelope[Any]:
    return wrap(PingSent(ping_id=f"p{n}", note=note), producer="t", occurred_at=NOW)


async def on_ping(uow: Unit, event: Envelope[PingSent]) -> None:
    if event.payload.note == "bad":
        raise ValueError("this one never applies")
    if event.payload.note == "later":
        raise RetryLater("not yet")
    if event.payload.note == "defect":
        raise AttributeError("a bug, not a bad record")
    uow.state.notes.append(event.payload.ping_id)
    pong = wrap(PongSent(ping_id=event.payload.ping_id), producer="t", occurred_at=NOW)
    uow.outbox.add(Outgoing(SMOKE_PINGS, event.payload.ping_id, pong))


def handler(unit: Unit) -> BatchHandler[Unit]:
    return BatchHandler(SMOKE_PINGS, {PingSent: on_ping}, lambda: unit, retries=2)


async def test_a_batch_is_one_unit_of_work_and_each_event_applies_once() -> None:
    unit = Unit()
    batch = [ping(n) for n in range(10)]
    outcome = await handler(unit).apply(batch)
    assert (outcome.applied, outcome.units, unit.commits) == (10, 1, 1)
    again = await handler(unit).apply([*batch[5:], ping(10)])
    assert (again.applied, again.duplicate) == (1, 5)
    assert unit.state.notes == [f"p{n}" for n in range(11)]
    assert [m.key for m in unit.published] == [f"p{n}" for n in range(11)]


async def test_a_failing_batch_is_split_down_to_the_bad_record_which_is_set_aside() -> None:
    unit = Unit()
    batch = [ping(n, "bad" if n == 5 else "") for n in range(8)]
    outcome = await handler(unit).apply(batch)
    assert (outcome.applied, outcome.set_aside) == (7, 1)
    assert unit.state.notes == [f"p{n}" for n in range(8) if n != 5]  # order kept
    assert [e[1] for e in unit.set_aside_events] == [batch[5].event_id]
    assert "p5" not in [m.key for m in unit.published]
    # Set aside means claimed: a redelivery applies nothing more.
    replay = await handler(unit).apply(batch)
    assert (replay.applied, replay.duplicate, replay.set_aside) == (0, 8, 0)


async def test_retry_later_gives_the_batch_back_with_nothing_applied() -> None:
    unit = Unit()
    with pytest.raises(RetryLater):
        await handler(unit).apply([ping(1), ping(2, "later"), ping(3)])
    assert unit.state.notes == []
    assert unit.inbox == set()
    assert unit.published == []


async def test_a_type_without_a_handler_is_counted_not_applied() -> None:
    unit = Unit()
    pong = wrap(PongSent(ping_id="x"), producer="t", occurred_at=NOW)
    outcome = await handler(unit).apply([pong, ping(1)])
    assert (outcome.unhandled, outcome.applied) == (1, 1)


def recording() -> tuple[InMemorySpanExporter, TracerProvider]:
    """A tracer provider whose finished spans the exporter keeps."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider


def traced_pings(parents: list[str]) -> list[Envelope[PingSent]]:
    """One ping per traceparent (``p0``, ``p1``, ...), each created in that trace."""
    return [
        wrap(
            PingSent(ping_id=f"p{n}"),
            producer="t",
            occurred_at=NOW,
            trace=TraceContext(traceparent=parent),
        )
        for n, parent in enumerate(parents)
    ]


async def test_each_event_is_handled_in_a_span_of_its_own_trace() -> None:
    exporter, provider = recording()
    events = traced_pings([f"00-{n:032x}-{n:016x}-01" for n in (1, 2)])
    seen: list[int] = []

    async def record(uow: Unit, event: Envelope[PingSent]) -> None:
        seen.append(trace.get_current_span().get_span_context().trace_id)

    unit = Unit()
    batch = BatchHandler(SMOKE_PINGS, {PingSent: record}, lambda: unit)
    await replace(batch, tracer=provider.get_tracer("t")).apply(events)
    assert seen == [1, 2]
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["smoke.pings process"] * 2 + ["smoke.pings batch"]
    assert all(s.kind is SpanKind.CONSUMER for s in spans)
    # The unit's own work: in no event's trace when they are many, linked to each.
    unit_span = spans[-1]
    assert unit_span.parent is None
    assert [link.context.trace_id for link in unit_span.links] == [1, 2]


async def test_the_unit_of_a_batch_from_one_trace_is_in_that_trace() -> None:
    exporter, provider = recording()
    events = traced_pings([f"00-{7:032x}-{7:016x}-01"] * 3)
    unit = Unit()
    batch = BatchHandler(SMOKE_PINGS, {PingSent: on_ping}, lambda: unit)
    await replace(batch, tracer=provider.get_tracer("t")).apply(events)
    (unit_span,) = [s for s in exporter.get_finished_spans() if s.name == "smoke.pings batch"]
    assert unit_span.context.trace_id == 7
    assert unit_span.parent is not None
    assert unit_span.parent.span_id == 7
    assert unit_span.attributes is not None
    assert unit_span.attributes["messaging.batch.message_count"] == 3


async def test_a_defect_of_the_code_sets_nothing_aside_and_gives_the_batch_back() -> None:
    unit = Unit()
    with pytest.raises(AttributeError):
        await handler(unit).apply([ping(1), ping(2, "defect"), ping(3)])
    assert (unit.state.notes, unit.set_aside_events, unit.published) == ([], [], [])
