"""The one consume path: a batch of records, one unit of work, handlers by payload class.

A subscriber made by ``subscribe_batches`` takes what the broker has (up to ``max_records``;
when nothing is buffered it waits, and wakes as soon as a fetch brings records) and hands the
batch to ``apply_batch``:

1. every record is decoded with the topic's codec (one that can never be read is logged,
   counted ``skipped`` and passed over; a payload type without a handler is counted
   ``unhandled`` and logged, never dropped silently);
2. one unit of work claims the whole batch in the inbox (one statement), runs each new
   event's handler in order, writes the outbox rows (one insert) and commits;
3. only then does faststream commit the offsets (``AckPolicy.NACK_ON_ERROR``): once a batch.

A batch that fails is rolled back and split in halves, each applied in a unit of its own,
down to the one record that fails alone; that one is retried ``RETRIES`` times and then set
aside (kept in ``<schema>.set_aside`` and claimed, counted ``set_aside``). Errors of the
infrastructure (a lost connection, a deadlock), ``RetryLater`` and defects of the code (an
``AttributeError``, a ``TypeError``...) are never set aside: they end the batch, which Kafka
delivers again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import asyncpg
from faststream import StreamMessage
from faststream.kafka import KafkaRouter
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, NonRecordingSpan, SpanKind, Tracer, TracerProvider

from gpux_contracts.events import Envelope, EventCodec, Payload, decode_or_none
from gpux_contracts.topics import Topic
from gpux_platform.broker import (
    IDLE_POLL_MS,
    batch_subscriber,
    observe_batch_lag,
    subscriber_options,
)
from gpux_platform.metrics import BATCH_RECORDS, HANDLER_SECONDS, RECORDS
from gpux_platform.settings import GpuxSettings
from gpux_platform.unit_of_work import UnitOfWork

U = TypeVar("U", bound=UnitOfWork)
Handler = Callable[[U, Envelope[Any]], Awaitable[None]]
"""Applies one event through the unit of work it is given."""

RETRIES = 3
"""Tries of a record that fails alone before it is set aside."""
RETRY_WAIT_S = 0.05
RETRY_LATER_WAIT_S = 0.5
"""How long a batch that must wait (``RetryLater``) waits before Kafka delivers it again."""
MAX_RECORDS = 500

log = logging.getLogger("gpux.batches")


class RetryLater(Exception):
    """The event cannot be applied yet (a rate, a parent not seen): deliver the batch again."""


TRANSIENT: tuple[type[BaseException], ...] = (
    RetryLater,
    OSError,
    asyncio.TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.TooManyConnectionsError,
    asyncpg.DeadlockDetectedError,
    asyncpg.SerializationError,
    asyncpg.CannotConnectNowError,
)
"""Failures of the moment, not of the record: the batch is given back to Kafka."""

DEFECTS: tuple[type[BaseException], ...] = (
    AttributeError,
    TypeError,
    NameError,
    ImportError,
    NotImplementedError,
    AssertionError,
)
"""Failures of the code, not of the record: setting records aside would empty the topic into
``set_aside`` after a bad deploy, so they stop the consumer instead (the batch comes again,
nothing is lost) until the code is fixed."""


@dataclass
class Outcome:
    """What became of a batch's records."""

    applied: int = 0
    duplicate: int = 0
    set_aside: int = 0
    unhandled: int = 0
    units: int = 0
    """Units of work committed (1 for a batch that went through whole)."""
    errors: list[str] = field(default_factory=list)


@dataclass
class BatchHandler(Generic[U]):
    """Applies batches of one topic's events through units of work, handlers by payload class."""

    topic: Topic
    handlers: Mapping[type[Payload], Handler[U]]
    unit_of_work: Callable[[], AbstractAsyncContextManager[U]]
    retries: int = RETRIES
    prepare: Callable[[U, Sequence[Envelope[Any]]], Awaitable[None]] | None = None
    """Runs once per unit on the events it claimed, before their handlers (e.g. to take the
    unit's row locks in one order, so concurrent units cannot deadlock)."""
    tracer: Tracer = field(default_factory=lambda: trace.get_tracer("gpux.batches"))
    """Each event is handled in a span of its own trace (a batch mixes many traces)."""

    async def apply(self, events: Sequence[Envelope[Any]]) -> Outcome:
        """Apply the events in order, each once; split a failing batch down to the bad one."""
        outcome = Outcome()
        known = []
        for event in events:
            if type(event.payload) in self.handlers:
                known.append(event)
            else:
                outcome.unhandled += 1
                log.warning(
                    "no handler for this event type",
                    extra={"topic": self.topic.name, "event_type": event.event_type},
                )
        if known:
            await self._apply(known, outcome)
        return outcome

    async def _apply(self, events: Sequence[Envelope[Any]], outcome: Outcome) -> None:
        try:
            await self._unit(events, outcome)
            return
        except TRANSIENT + DEFECTS:
            raise
        except Exception as exc:
            if len(events) == 1:
                await self._alone(events[0], exc, outcome)
                return
            log.info(
                "a batch failed; splitting it",
                extra={"topic": self.topic.name, "size": len(events), "error": repr(exc)},
            )
        half = len(events) // 2
        await self._apply(events[:half], outcome)
        await self._apply(events[half:], outcome)

    async def _unit(self, events: Sequence[Envelope[Any]], outcome: Outcome) -> None:
        with self._batch_span(events):
            async with self.unit_of_work() as uow:
                new = await uow.claim(self.topic.name, events)
                if self.prepare is not None:
                    await self.prepare(uow, new)
                for event in new:
                    with self._span(event):
                        await self.handlers[type(event.payload)](uow, event)
                await uow.commit()
        outcome.units += 1
        outcome.applied += len(new)
        outcome.duplicate += len(events) - len(new)

    def _batch_span(self, events: Sequence[Envelope[Any]]) -> AbstractContextManager[Any]:
        """A span of the unit's own work (the inbox claim, ``prepare``, the commit with what
        it flushes), linked to each event's trace; when every event comes from one trace, it
        is in that trace too (a lone order's hold shows in the order's trace)."""
        origins = [
            trace.get_current_span(propagate.extract(e.trace.carrier())).get_span_context()
            for e in events
            if e.trace is not None
        ]
        valid = [o for o in origins if o.is_valid]
        one_trace = len({o.trace_id for o in valid}) == 1 and len(valid) == len(events)
        parent = trace.set_span_in_context(NonRecordingSpan(valid[0])) if one_trace else Context()
        return self.tracer.start_as_current_span(
            f"{self.topic.name} batch",
            context=parent,
            kind=SpanKind.CONSUMER,
            links=[Link(o) for o in valid],
            attributes={
                "messaging.system": "kafka",
                "messaging.destination.name": self.topic.name,
                "messaging.batch.message_count": len(events),
                "messaging.operation.type": "process",
            },
        )

    def _span(self, event: Envelope[Any]) -> AbstractContextManager[Any]:
        """A consumer span in the event's own trace (the one it was created in)."""
        carrier = event.trace.carrier() if event.trace is not None else {}
        return self.tracer.start_as_current_span(
            f"{self.topic.name} process",
            context=propagate.extract(carrier),
            kind=SpanKind.CONSUMER,
            attributes={
                "messaging.system": "kafka",
                "messaging.destination.name": self.topic.name,
                "messaging.message.id": event.event_id,
                "messaging.operation.type": "process",
            },
        )

    async def _alone(self, event: Envelope[Any], error: Exception, outcome: Outcome) -> None:
        for _ in range(self.retries - 1):
            await asyncio.sleep(RETRY_WAIT_S)
            try:
                await self._unit([event], outcome)
                return
            except TRANSIENT + DEFECTS:
                raise
            except Exception as exc:
                error = exc
        log.error(
            "an event fails alone; set aside",
            extra={"topic": self.topic.name, "event_id": event.event_id, "error": repr(error)},
        )
        async with self.unit_of_work() as uow:
            await uow.set_aside(self.topic.name, event, repr(error))
            await uow.commit()
        outcome.set_aside += 1
        outcome.errors.append(repr(error))


def codec_for(handlers: Mapping[type[Payload], Any]) -> EventCodec[Any]:
    """The codec that reads the payload types the handlers take."""
    return EventCodec(*handlers)


def subscribe_batches(
    router: KafkaRouter,
    settings: GpuxSettings,
    *,
    group: str,
    batch: BatchHandler[Any],
    codec: EventCodec[Any] | None = None,
    max_records: int = MAX_RECORDS,
    wait_ms: int = IDLE_POLL_MS,
    tracer_provider: TracerProvider | None = None,
) -> None:
    """Add a batch subscriber of ``batch.topic`` in ``group`` to ``router``.

    ``codec`` reads the topic's records (by default: the handlers' payload types); a record of
    a type it does not know is logged and counted ``skipped``. ``tracer_provider`` is the
    service's (the runtime's): each event's span is exported as the service's. ``wait_ms`` is
    the longest idle poll; a record that arrives ends it at once.
    """
    reader = codec or codec_for(batch.handlers)
    if tracer_provider is not None:
        batch = replace(batch, tracer=tracer_provider.get_tracer("gpux.batches"))
    name = batch.topic.name

    @batch_subscriber(
        router,
        settings.topic(batch.topic),
        max_records=max_records,
        poll_ms=wait_ms,
        **subscriber_options(settings, group),
    )
    async def consume(message: StreamMessage[Any]) -> None:
        started = time.perf_counter()
        records = message.raw_message
        bodies = [r.value or b"" for r in records] if isinstance(records, tuple) else [message.body]
        events = [e for e in (decode_or_none(reader, b, log) for b in bodies) if e is not None]
        skipped = len(bodies) - len(events)
        outcome = Outcome()
        try:
            outcome = await batch.apply(events)
        except RetryLater:
            RECORDS.labels(name, "retry_later").inc(len(events))
            await asyncio.sleep(RETRY_LATER_WAIT_S)  # then the batch comes again
            raise
        except BaseException:
            RECORDS.labels(name, "failed").inc(len(events))
            raise
        finally:
            HANDLER_SECONDS.labels(name, "batch").observe(time.perf_counter() - started)
        BATCH_RECORDS.labels(name).observe(len(bodies))
        for label, count in (
            ("applied", outcome.applied),
            ("duplicate", outcome.duplicate),
            ("set_aside", outcome.set_aside),
            ("unhandled", outcome.unhandled),
            ("skipped", skipped),
        ):
            if count:
                RECORDS.labels(name, label).inc(count)
        observe_batch_lag(message)
