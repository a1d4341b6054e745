"""What the gateway's PostgreSQL repositories share: the unit's connection, and the reads of a
table whose rows an account owns."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar

import asyncpg

T = TypeVar("T")

IDENTIFIER = re.compile(r"[a-z_]+(\.[a-z_]+)?")
"""A table's (schema-qualified) or a column's name, as the SQL below may hold it."""


class ConnectionRepository:
    """A repository that reads and writes on the unit of work's connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn


class OwnedTable(Generic[T]):
    """A table of rows keyed by a text ``key`` column and owned by the account in ``owner``:
    an account sees only its own rows (another account's is missing, like one never stored),
    a page at a time in key order after a cursor key; ``make`` reads a record as a row."""

    def __init__(
        self, name: str, owner: str, make: Callable[[asyncpg.Record], T], *, key: str = "id"
    ) -> None:
        # The names are the repositories' own constants, never input; anything else is refused.
        for identifier in (name, owner, key):
            if not IDENTIFIER.fullmatch(identifier):
                raise ValueError(f"not a table or column name: {identifier!r}")
        self._make = make
        where = f"WHERE {key} = $1 AND {owner} = $2"
        self._one = f"SELECT * FROM {name} {where}"  # noqa: S608 - our own names
        self._page = (
            f"SELECT * FROM {name} WHERE {owner} = $1"  # noqa: S608 - our own names
            f" AND ($2::text IS NULL OR {key} > $2) ORDER BY {key} LIMIT $3"
        )
        self._delete = f"DELETE FROM {name} {where}"  # noqa: S608 - our own names

    async def get(self, conn: asyncpg.Connection, owner_id: str, key: str) -> T | None:
        """The owner's row under ``key``, or None."""
        row = await conn.fetchrow(self._one, key, owner_id)
        return None if row is None else self._make(row)

    async def page(
        self, conn: asyncpg.Connection, owner_id: str, after: str | None, limit: int
    ) -> list[T]:
        """Up to ``limit`` of the owner's rows in key order, after the cursor key (None: from
        the first)."""
        return [self._make(r) for r in await conn.fetch(self._page, owner_id, after, limit)]

    async def delete(self, conn: asyncpg.Connection, owner_id: str, key: str) -> bool:
        """Delete the owner's row under ``key``; False when it has no such row."""
        return str(await conn.execute(self._delete, key, owner_id)) == "DELETE 1"
