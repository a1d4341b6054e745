"""Statements a unit of work runs when it commits: in the order given, batched where they can be.

The views the gateway keeps from consumed events are written this way: a batch of events
queues one statement each, and the commit runs each run of consecutive statements with the
same SQL as one ``executemany`` (pipelined: one round trip for the run). Running them in
order keeps the effect of applying the events one by one, conditions and all.
"""

from __future__ import annotations

import itertools
from typing import Any

import asyncpg

from gpux_gateway.adapters.postgres.repository import ConnectionRepository


class Deferred:
    """A queue of statements, run on the unit's connection at its commit."""

    def __init__(self) -> None:
        self._queue: list[tuple[str, tuple[Any, ...]]] = []

    def add(self, sql: str, *args: Any) -> None:
        """Queue one statement with its arguments."""
        self._queue.append((sql, args))

    async def run(self, conn: asyncpg.Connection) -> None:
        """Run every queued statement in order, each run of one SQL as one ``executemany``."""
        queue, self._queue = self._queue, []
        for sql, run in itertools.groupby(queue, key=lambda item: item[0]):
            await conn.executemany(sql, [args for _, args in run])


class DeferredRepository(ConnectionRepository):
    """A view repository: it reads on the unit's connection and queues its writes of consumed
    events on the unit's ``Deferred``, which the commit runs."""

    def __init__(self, conn: asyncpg.Connection, deferred: Deferred) -> None:
        super().__init__(conn)
        self._deferred = deferred
