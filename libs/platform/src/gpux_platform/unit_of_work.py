"""The unit of work every handler receives: its repositories, the inbox, the outbox; commit.

Handlers never open a transaction, publish or commit: they change state through the
repositories of the unit they are given and queue events with ``uow.outbox.add``. The
boundary (a batch of consumed records, an HTTP request, a timer tick) opens the unit,
runs the handlers and commits once: the inbox claim, every state change and the outbox rows
(one insert) land in one PostgreSQL transaction, or none of them does.

Each service declares a ``UnitOfWork`` protocol of its own (this one plus its repositories)
with two implementations: ``adapters/postgres`` on top of ``PostgresUnitOfWork`` and
``adapters/memory`` on top of ``MemoryUnitOfWork``, which the service tests use.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Protocol, Self

import asyncpg

from gpux_contracts.events import Envelope
from gpux_platform import outbox as outbox_table
from gpux_platform.broker import Outgoing


class Outbox:
    """Events queued in a unit of work, written in one insert when it commits."""

    def __init__(self) -> None:
        self.messages: list[Outgoing] = []

    def add(self, *messages: Outgoing) -> None:
        """Queue events to publish once the unit commits (none of them if it rolls back)."""
        self.messages.extend(messages)


class UnitOfWork(Protocol):
    """What every handler receives; a service's own protocol adds its repositories."""

    outbox: Outbox

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        """Record events as consumed; returns those not consumed before, in order."""
        ...

    async def commit(self) -> None:
        """Make every change and queued event of this unit durable, at once."""
        ...

    async def rollback(self) -> None:
        """Forget every change and queued event of this unit."""
        ...

    async def set_aside(self, topic: str, event: Envelope[Any], error: str) -> None:
        """Keep an event that cannot be applied (claimed, so it is not retried), with why."""
        ...


class _UnitOfWorkBase:
    """What both units of work share: leaving one that did not commit rolls it back."""

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if self._uncommitted():
                await self.rollback()
        finally:
            await self._release()

    def _uncommitted(self) -> bool:
        """Whether the unit began and neither committed nor rolled back yet."""
        raise NotImplementedError

    async def _release(self) -> None:
        """Give back what the unit holds once it is left (nothing by default)."""

    async def rollback(self) -> None:
        """Forget every change and queued event of this unit."""
        raise NotImplementedError

    async def after_commit(self) -> None:
        """Work that follows the committed state (a subclass's hook; nothing by default)."""


class PostgresUnitOfWork(_UnitOfWorkBase):
    """One PostgreSQL transaction on a pooled connection; subclasses add repositories.

    ``async with uow:`` begins; leaving without ``commit()`` rolls back. ``_begun`` is where a
    subclass builds its repositories on ``self.conn``; ``after_commit`` runs once the
    transaction committed (read models that follow the database, such as Redis).
    """

    def __init__(self, pool: asyncpg.Pool, schema: str) -> None:
        self.pool = pool
        self.schema = schema
        self.outbox = Outbox()
        self._conn: asyncpg.Connection | None = None
        self._transaction: Any = None

    @property
    def conn(self) -> asyncpg.Connection:
        """The connection of the open transaction."""
        if self._conn is None:
            raise RuntimeError("the unit of work is not open (use `async with`)")
        return self._conn

    async def __aenter__(self) -> Self:
        self.outbox = Outbox()
        self._conn = await self.pool.acquire()
        try:
            self._transaction = self._conn.transaction()
            await self._transaction.start()
            self._begun()
        except BaseException:
            await self.pool.release(self._conn)
            self._conn = None
            raise
        return self

    def _begun(self) -> None:
        """Build the repositories on ``self.conn`` (a subclass's hook)."""

    def _uncommitted(self) -> bool:
        return self._transaction is not None

    async def _release(self) -> None:
        if self._conn is not None:
            await self.pool.release(self._conn)
            self._conn = None

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        """Claim every event in the inbox in one statement; returns the new ones, in order."""
        if not events:
            return []
        rows = await self.conn.fetch(
            f"INSERT INTO {self.schema}.inbox (event_id, topic)"  # noqa: S608 - own schema
            " SELECT e, $2 FROM unnest($1::text[]) AS e ON CONFLICT (event_id) DO NOTHING"
            " RETURNING event_id",
            [e.event_id for e in events],
            topic,
        )
        new = {row["event_id"] for row in rows}
        claimed = []
        for event in events:  # a copy of an event within the batch is not new either
            if event.event_id in new:
                new.discard(event.event_id)
                claimed.append(event)
        return claimed

    async def set_aside(self, topic: str, event: Envelope[Any], error: str) -> None:
        """Claim the event and keep it in ``<schema>.set_aside`` with the error, for a person."""
        await self.conn.execute(
            "WITH claimed AS ("  # noqa: S608 - the schema is the service's own name
            f" INSERT INTO {self.schema}.inbox (event_id, topic) VALUES ($1, $2)"
            " ON CONFLICT (event_id) DO NOTHING)"
            f" INSERT INTO {self.schema}.set_aside (event_id, topic, body, error)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING",
            event.event_id,
            topic,
            event.model_dump_json().encode(),
            error[:2000],
        )

    async def commit(self) -> None:
        """Write the queued events (one insert), commit, then run ``after_commit``."""
        await outbox_table.add(self.conn, self.schema, self.outbox.messages)
        await self._transaction.commit()
        self._transaction = None
        await self.after_commit()

    async def rollback(self) -> None:
        """Roll the transaction back and drop the queued events."""
        transaction, self._transaction = self._transaction, None
        self.outbox = Outbox()
        if transaction is not None:
            await transaction.rollback()


class MemoryUnitOfWork(_UnitOfWorkBase):
    """The fake unit of work: state in plain objects, committed or restored as a whole.

    A subclass keeps everything its repositories hold in ``self.state`` (any deep-copyable
    object); entering takes a copy, ``rollback`` puts it back, so a failed unit leaves nothing
    behind, as a PostgreSQL transaction would. ``published`` collects the committed events.
    """

    def __init__(self, state: Any) -> None:
        self.state = state
        self.outbox = Outbox()
        self.inbox: set[str] = set()
        self.published: list[Outgoing] = []
        self.set_aside_events: list[tuple[str, str, str]] = []
        """(topic, event id, error) of every event set aside."""
        self.commits = 0
        self._saved: tuple[Any, set[str]] | None = None

    async def __aenter__(self) -> Self:
        self.outbox = Outbox()
        self._saved = (copy.deepcopy(self.state), set(self.inbox))
        self._begun()
        return self

    def _begun(self) -> None:
        """Build the repositories on ``self.state`` (a subclass's hook; rollback replaces it)."""

    def _uncommitted(self) -> bool:
        return self._saved is not None

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        """Record events as consumed; returns those not seen before, in order."""
        new = []
        for event in events:
            if event.event_id not in self.inbox:
                self.inbox.add(event.event_id)
                new.append(event)
        return new

    async def set_aside(self, topic: str, event: Envelope[Any], error: str) -> None:
        """Claim the event and keep it with the error."""
        self.inbox.add(event.event_id)
        self.set_aside_events.append((topic, event.event_id, error))

    async def commit(self) -> None:
        """Keep the state and publish the queued events."""
        seen = {m.envelope.event_id for m in self.published}
        for message in self.outbox.messages:  # as the outbox table: an event id once
            if message.envelope.event_id not in seen:
                seen.add(message.envelope.event_id)
                self.published.append(message)
        self.outbox = Outbox()
        self._saved = None
        self.commits += 1
        await self.after_commit()

    async def rollback(self) -> None:
        """Restore the state the unit began with."""
        if self._saved is not None:
            self.state, self.inbox = self._saved
            self._saved = None
        self.outbox = Outbox()
