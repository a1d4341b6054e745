"""Round trips to PostgreSQL, counted: what "set-based per batch" is checked with.

``Counted`` wraps one asyncpg connection and counts the calls that each cost a round trip
(a statement, and a transaction's begin and end); ``OneConnection`` lends it as a pool, so a
service's unit of work (which acquires its own connection) runs on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

STATEMENTS = frozenset({"execute", "executemany", "fetch", "fetchrow", "fetchval"})
"""The connection's calls that are one round trip each (``executemany``: one, pipelined)."""


@dataclass
class Counted:
    """A connection that counts its round trips; everything else goes to the real one."""

    conn: asyncpg.Connection
    round_trips: int = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.conn, name)
        if name in STATEMENTS:
            self.round_trips += 1
        elif name == "transaction":
            self.round_trips += 2  # its begin (or savepoint) and its end
        return found


@dataclass
class OneConnection:
    """A pool of one counted connection, for a unit of work (which acquires its own)."""

    conn: Counted

    async def acquire(self) -> Counted:
        return self.conn

    async def release(self, conn: Counted) -> None:
        pass
