"""What every PostgreSQL repository of billing is: statements on the unit of work's
connection, inside its transaction (the unit commits, never a repository)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import asyncpg

T = TypeVar("T")


class PostgresRepository:
    """A repository on the unit of work's connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def _one(self, query: str, key: object, build: Callable[[asyncpg.Record], T]) -> T | None:
        """What ``build`` makes of the row ``query`` selects by ``key``, or None (no row)."""
        row = await self.conn.fetchrow(query, key)
        return None if row is None else build(row)
