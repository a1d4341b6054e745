"""Matching's units of work on PostgreSQL, and the store its partitions are built on.

``PostgresMatchingUnitOfWork``: one transaction over every repository (``market.sessions``
uses it as it is); the order and offer repositories write their saves in one insert each at
commit. ``PostgresBookUnitOfWork``: a unit of one partition of the book; claiming its inputs
also reads what the book knows of their orders and offers (one query each), so the handlers
ask no per-record questions; its ``commit`` first logs the journal's commands and queues their
events (``journal.seal``), then writes the outbox and commits, then tells the partition what
it committed. With a tracer, a unit runs in a consumer span ``<topic> process`` that continues
the trace of its first input and links the others', so an order stays one trace (its SQL in
it) although the book consumes in batches.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from types import TracebackType
from typing import Any

import asyncpg
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanKind, Tracer

from gpux_contracts.events import Envelope
from gpux_contracts.offers import OfferAccepted
from gpux_contracts.orders import OrderFunded
from gpux_matching.adapters.postgres import SCHEMA
from gpux_matching.adapters.postgres.commands import PostgresCommandLog
from gpux_matching.adapters.postgres.market import PostgresMarketStates
from gpux_matching.adapters.postgres.offers import PostgresOffers
from gpux_matching.adapters.postgres.orders import PostgresOrders
from gpux_matching.adapters.postgres.snapshots import SnapshotWriter
from gpux_matching.service.journal import Journal, seal
from gpux_matching.service.partition import Partition
from gpux_matching.service.unit_of_work import (
    CommandLog,
    MarketStates,
    Offers,
    Orders,
)
from gpux_platform.unit_of_work import PostgresUnitOfWork


class PostgresMatchingUnitOfWork(PostgresUnitOfWork):
    """One transaction over matching's repositories."""

    offers: Offers
    orders: Orders
    market: MarketStates
    commands: CommandLog

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool, SCHEMA)

    def _begun(self) -> None:
        self._offers = PostgresOffers(self.conn)
        self._orders = PostgresOrders(self.conn)
        self.offers = self._offers
        self.orders = self._orders
        self.market = PostgresMarketStates(self.conn)
        self.commands = PostgresCommandLog(self.conn)

    async def commit(self) -> None:
        """Write the saved orders and offers (one insert each), the outbox, and commit."""
        await self._orders.flush()
        await self._offers.flush()
        await super().commit()


def _context(event: Envelope[Any]) -> Context | None:
    return None if event.trace is None else propagate.extract(event.trace.carrier())


class PostgresBookUnitOfWork(PostgresMatchingUnitOfWork):
    """A unit of work of one partition of the book."""

    def __init__(
        self, pool: asyncpg.Pool, partition: Partition, tracer: Tracer | None = None
    ) -> None:
        super().__init__(pool)
        self._partition = partition
        self._journal = Journal()
        self._tracer = tracer
        self._span: contextlib.ExitStack | None = None

    @property
    def partition(self) -> Partition:
        """The partition this unit applies commands to."""
        return self._partition

    @property
    def journal(self) -> Journal:
        """The commands applied in this unit."""
        return self._journal

    def _begun(self) -> None:
        super()._begun()
        self._journal = Journal()

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        """Claim the inputs, and read what the book knows of their orders and offers."""
        self._trace(topic, events)
        new = await super().claim(topic, events)
        payloads = [event.payload for event in new]
        await self._orders.preload(p.order.order_id for p in payloads if isinstance(p, OrderFunded))
        offers = (p.offer.offer_id for p in payloads if isinstance(p, OfferAccepted))
        await self._offers.preload(offers)
        return new

    def _trace(self, topic: str, events: Sequence[Envelope[Any]]) -> None:
        """Run the rest of the unit in a consumer span of its inputs' trace."""
        if self._tracer is None or self._span is not None or not events:
            return
        first, *others = [_context(event) for event in events]
        links = [
            Link(trace.get_current_span(context).get_span_context())
            for context in others
            if context is not None
        ]
        stack = contextlib.ExitStack()
        span = stack.enter_context(
            self._tracer.start_as_current_span(
                f"{topic} process", context=first, kind=SpanKind.CONSUMER, links=links
            )
        )
        span.set_attribute("messaging.batch.message_count", len(events))
        span.set_attribute("gpux.partition", self._partition.number)
        self._span = stack

    async def commit(self) -> None:
        """Log the unit's commands and queue their events, then commit everything at once."""
        await seal(self)
        await super().commit()

    async def after_commit(self) -> None:
        """The partition's engine now is the database's state again."""
        self._partition.committed(self._journal.seqs, self._journal.shown)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace_back: TracebackType | None,
    ) -> None:
        try:
            await super().__aexit__(kind, error, trace_back)
        finally:
            span, self._span = self._span, None
            if span is not None:
                span.__exit__(kind, error, trace_back)


class PostgresPartitionStore:
    """Units, consistent reads and snapshot writers of the book's partitions, on one pool."""

    def __init__(self, pool: asyncpg.Pool, tracer: Tracer | None = None) -> None:
        self.pool = pool
        self.tracer = tracer
        """Traces each unit that consumes inputs (None: no spans of matching's own)."""

    def unit(self, partition: Partition) -> PostgresBookUnitOfWork:
        """A unit of work of ``partition``."""
        return PostgresBookUnitOfWork(self.pool, partition, self.tracer)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[CommandLog]:
        """The command log as of one moment (a read-only, repeatable-read transaction)."""
        async with (
            self.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            yield PostgresCommandLog(conn)

    def snapshots(self, partition: int, saved: Callable[[int], None]) -> SnapshotWriter:
        """The snapshot writer of ``partition``."""
        return SnapshotWriter(self.pool, partition, saved)
