"""Transactional outbox and inbox: no dual writes between PostgreSQL and Kafka.

A unit of work writes its queued events with ``add`` on its connection, inside its
transaction (``gpux_platform.unit_of_work``); ``OutboxRelay`` publishes the committed rows
in order and marks them published. A crash between publishing and marking publishes a row
again with the same ``event_id``, which consumers recognise in their inbox (the unit of
work's ``claim``), so the effect happens once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from faststream.kafka import KafkaBroker
from opentelemetry import context, propagate, trace
from opentelemetry.trace import SpanKind

from gpux_contracts.events import TYPE_HEADER
from gpux_platform.broker import Outgoing, encode, kafka_producer
from gpux_platform.metrics import (
    EVENTS_PUBLISHED,
    OUTBOX_BACKLOG,
    OUTBOX_OLDEST_AGE,
    OUTBOX_WAKEUPS,
)
from gpux_platform.producer_ids import confirmed
from gpux_platform.settings import GpuxSettings
from gpux_platform.telemetry import kafka_instrumented
from gpux_platform.waiting import woken

log = logging.getLogger("gpux.outbox")
_tracer = trace.get_tracer("gpux.outbox")


async def add(conn: asyncpg.Connection, schema: str, messages: Sequence[Outgoing]) -> None:
    """Write messages to the schema's outbox on this connection (call inside its transaction).

    One statement however many messages (``INSERT ... SELECT FROM unnest``, in the order
    given, a replayed event id skipped), which also wakes the relay (``pg_notify``).
    """
    if not messages:
        return
    ids: list[str] = []
    topics: list[str] = []
    keys: list[str] = []
    bodies: list[bytes] = []
    headers: list[str] = []
    for m in messages:
        envelope = m.envelope
        ids.append(envelope.event_id)
        topics.append(m.topic.name)
        keys.append(m.key)
        bodies.append(encode(envelope))
        carrier = envelope.trace.carrier() if envelope.trace else {}
        headers.append(json.dumps({**envelope.headers(), **carrier}))
    await conn.execute(
        "WITH added AS ("  # noqa: S608 - the schema is the service's own name, not input
        f" INSERT INTO {schema}.outbox (event_id, topic, key, body, headers)"
        " SELECT m.event_id, m.topic, m.key, m.body, m.headers::jsonb"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::text[])"
        " WITH ORDINALITY AS m (event_id, topic, key, body, headers, n)"
        " ORDER BY m.n ON CONFLICT (event_id) DO NOTHING)"
        f" SELECT pg_notify('{schema}_outbox', '')",
        ids,
        topics,
        keys,
        bodies,
        headers,
    )


LISTEN_RETRY_MIN_S = 0.1
"""The first pause before listening again once the LISTEN connection was lost."""
LISTEN_RETRY_MAX_S = 2.0
"""The longest pause between attempts to listen again (PostgreSQL still down)."""


TRACE_HEADERS = ("traceparent", "tracestate")


@contextlib.contextmanager
def in_origin_trace(topic: str, headers: dict[str, Any]) -> Iterator[None]:
    """Send a row in the trace its event was created in, not in the relay's own.

    With aiokafka instrumented (``telemetry.instrument_libraries``) its ``<topic> send`` span
    is made there and puts its own context in the record's headers; otherwise gpux makes that
    producer span and puts the context in ``headers`` itself.
    """
    origin = propagate.extract(headers)
    if kafka_instrumented():
        for name in TRACE_HEADERS:
            headers.pop(name, None)  # the instrumentation adds its own span's
        token = context.attach(origin)
        try:
            yield
        finally:
            context.detach(token)
        return
    with _tracer.start_as_current_span(
        f"{topic} send",
        context=origin,
        kind=SpanKind.PRODUCER,
        attributes={
            "messaging.system": "kafka",
            "messaging.destination.name": topic,
            "messaging.operation.type": "send",
        },
    ):
        propagate.inject(headers)
        yield


@dataclass(frozen=True, slots=True)
class Backlog:
    """An outbox's unpublished rows, as last measured."""

    rows: int
    oldest_age_s: float
    """Seconds since the oldest unpublished row was committed (0 when none waits)."""


@dataclass
class RelayStats:
    """What woke one relay, counted since it started (``gpux_outbox_wakeups_total`` too)."""

    listens: int = 0
    """Times it started to LISTEN (1 + the times it listened again after losing it)."""
    notified: int = 0
    """Wake-ups by NOTIFY (a commit)."""
    polls: int = 0
    """Wake-ups by the fallback poll (nothing notified within ``idle_wait_s``)."""
    lost: int = 0
    """Times the LISTEN connection was lost or could not be opened."""


class OutboxRelay:
    """Publishes a schema's committed outbox rows to Kafka, in order, in batches.

    Several relays may serve one schema (replicas, or the gateway's two roles); they take
    turns under a transaction-scoped advisory lock, so the rows leave in ``seq`` order."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        broker: KafkaBroker,
        settings: GpuxSettings,
        schema: str,
        *,
        batch_size: int = 500,
        idle_wait_s: float = 1.0,
        backlog_interval_s: float | None = None,
    ) -> None:
        self._pool = pool
        self._broker = broker
        self._settings = settings
        self._schema = schema
        self._lock = f"gpux.outbox.{schema}"
        self._batch_size = batch_size
        self._idle_wait_s = idle_wait_s
        self._backlog_interval_s = backlog_interval_s or settings.outbox_backlog_interval_s
        self._wake = asyncio.Event()
        self.stats = RelayStats()

    async def publish_pending(self) -> int:
        """Publish one batch of unpublished rows; returns how many were published."""
        async with self._pool.acquire() as conn, conn.transaction():
            # One relay of a schema at a time (replicas, or two roles sharing an outbox): the
            # others wait here. Skipping the rows another relay has locked would publish later
            # rows first, and a key's events (an order, then its cancel) out of order.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", self._lock)
            rows = await conn.fetch(
                f"SELECT seq, topic, key, body, headers FROM {self._schema}.outbox"  # noqa: S608
                " WHERE published_at IS NULL ORDER BY seq LIMIT $1",
                self._batch_size,
            )
            if not rows:
                return 0
            # Straight to the broker's aiokafka producer: faststream's publish path (a span, a
            # context and its middlewares per record) cost several times the send itself.
            producer = kafka_producer(self._broker)
            futures: list[asyncio.Future[Any]] = []
            published: Counter[tuple[str, str]] = Counter()
            for row in rows:
                headers = {**json.loads(row["headers"]), "content-type": "application/json"}
                published[(row["topic"], headers.get(TYPE_HEADER, ""))] += 1
                topic = f"{self._settings.namespace}{row['topic']}"
                with in_origin_trace(topic, headers):
                    futures.append(
                        await producer.send(
                            topic,
                            bytes(row["body"]),
                            key=row["key"].encode(),
                            headers=[(k, str(v).encode()) for k, v in headers.items()],
                        )
                    )
            await confirmed(producer, futures)  # after a failure: a new producer id
            await conn.execute(
                f"UPDATE {self._schema}.outbox SET published_at = now()"  # noqa: S608
                " WHERE seq = ANY($1::bigint[])",
                [row["seq"] for row in rows],
            )
        for (topic, event_type), count in published.items():
            EVENTS_PUBLISHED.labels(topic, event_type).inc(count)
        return len(rows)

    async def measure_backlog(self) -> Backlog:
        """Count the unpublished rows and the oldest one's age (one statement, on the partial
        index of unpublished rows), and set ``gpux_outbox_backlog`` and its age."""
        row = await self._pool.fetchrow(
            f"SELECT count(*) AS rows, coalesce(extract(epoch FROM now() - ("  # noqa: S608
            f" SELECT created_at FROM {self._schema}.outbox WHERE published_at IS NULL"
            f" ORDER BY seq LIMIT 1)), 0)::float8 AS age FROM {self._schema}.outbox"
            " WHERE published_at IS NULL"
        )
        assert row is not None  # an aggregate always answers one row
        backlog = Backlog(int(row["rows"]), max(0.0, float(row["age"])))
        OUTBOX_BACKLOG.labels(self._schema).set(backlog.rows)
        OUTBOX_OLDEST_AGE.labels(self._schema).set(backlog.oldest_age_s)
        return backlog

    async def watch_backlog(self) -> None:
        """Measure the backlog every ``backlog_interval_s`` until cancelled (a failed
        measurement keeps the last figures)."""
        while True:
            try:
                await self.measure_backlog()
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                log.info("outbox backlog not measured", extra={"error": repr(exc)})
            await asyncio.sleep(self._backlog_interval_s)

    async def run(self) -> None:
        """Relay until cancelled, and measure the backlog beside it."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.relay())
            tasks.create_task(self.watch_backlog())

    async def relay(self) -> None:
        """Relay until cancelled: woken by NOTIFY, and polling as a fallback.

        The LISTEN connection is watched: when PostgreSQL ends it (a restart, a failover), the
        relay listens again on a new connection as soon as the server takes one, retrying
        with a growing pause, and publishes what was committed meanwhile. Without that it
        would fall back to polling for good (every ``idle_wait_s``, ~1 s an event).
        """
        pause_s = LISTEN_RETRY_MIN_S
        while True:
            try:
                async with self._listening() as lost:
                    pause_s = LISTEN_RETRY_MIN_S
                    await self._relay(lost)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                log.warning(
                    "outbox relay cannot listen; retrying",
                    extra={"schema": self._schema, "error": repr(exc), "pause_s": pause_s},
                )
            OUTBOX_WAKEUPS.labels(self._schema, "lost").inc()
            self.stats.lost += 1
            await asyncio.sleep(pause_s)
            pause_s = min(pause_s * 2, LISTEN_RETRY_MAX_S)

    @contextlib.asynccontextmanager
    async def _listening(self) -> AsyncIterator[asyncio.Event]:
        """A connection LISTENing on the schema's channel; yields an event set when the
        connection is lost (PostgreSQL ended it), and gives the connection back on leaving."""
        channel = f"{self._schema}_outbox"
        lost = asyncio.Event()

        def wake(*_: object) -> None:
            self._wake.set()

        def terminated(*_: object) -> None:
            lost.set()
            self._wake.set()

        listener = await self._pool.acquire()
        try:
            listener.add_termination_listener(terminated)
            await listener.add_listener(channel, wake)
            self.stats.listens += 1
            yield lost
        finally:
            # A lost connection may be back in the pool already (asyncpg released it): then
            # these calls refuse, and the release below does nothing.
            with contextlib.suppress(Exception):
                await listener.remove_listener(channel, wake)
            with contextlib.suppress(asyncpg.InterfaceError):
                listener.remove_termination_listener(terminated)
            await self._pool.release(listener)

    async def _relay(self, lost: asyncio.Event) -> None:
        """Publish, then wait for a NOTIFY or the poll, until the LISTEN connection is lost."""
        while not lost.is_set():
            self._wake.clear()  # before publishing, so a NOTIFY during it is not lost
            try:
                while await self.publish_pending() == self._batch_size:
                    pass
            except Exception as exc:  # a broker or database error must not end the relay
                log.warning("outbox relay failed; retrying", extra={"error": repr(exc)})
            if not await woken(self._wake, self._idle_wait_s):
                cause = "poll"
                self.stats.polls += 1
            else:
                cause = "lost" if lost.is_set() else "notify"
                self.stats.notified += cause == "notify"
            if cause != "lost":
                OUTBOX_WAKEUPS.labels(self._schema, cause).inc()
