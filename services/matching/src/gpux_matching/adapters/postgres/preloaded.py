"""What the book's repositories of offers and orders share within a unit of work.

Each answers per id from what it read or saved before; ``preload`` reads a whole batch's
ids in one query; saves wait as rows by id and are written in one insert (``flush``), before
owners are read.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import ClassVar, Generic, TypeVar

import asyncpg

T = TypeVar("T")
R = TypeVar("R", bound=tuple[object, ...])


class Preloaded(ABC, Generic[T, R]):
    """Per-id answers (``T``) on one connection (inside the caller's transaction), read in
    batches; saves waiting as rows (``R``: the columns after the id) until ``flush``."""

    OWNERS_SQL: ClassVar[str]
    """Selects (id, owner id, gpu) of the ids in ``$1``."""
    INSERT_SQL: ClassVar[str]
    """Inserts the saves: the ids in ``$1``, each further column of the rows in ``$2``...."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self._cache: dict[str, T] = {}
        self._pending: dict[str, R] = {}

    @abstractmethod
    async def _fetch(self, ids: list[str]) -> dict[str, T]:
        """The answer for each of these ids (every one of them), in one query."""

    async def flush(self) -> None:
        """Write the saves of this unit so far, in one insert."""
        if not self._pending:
            return
        ids, rows = list(self._pending), list(self._pending.values())
        self._pending = {}
        columns = [list(column) for column in zip(*rows, strict=True)]
        await self.conn.execute(self.INSERT_SQL, ids, *columns)

    async def preload(self, ids: Iterable[str]) -> None:
        """Read the answer for each of these ids not read or saved before, in one query."""
        missing = sorted({i for i in ids if i not in self._cache})
        if missing:
            self._cache.update(await self._fetch(missing))

    async def _answer(self, key: str) -> T:
        if key not in self._cache:
            await self.preload([key])
        return self._cache[key]

    async def owners(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(owner id, gpu) of each known id, the unit's saves included."""
        await self.flush()
        rows = await self.conn.fetch(self.OWNERS_SQL, list(ids))
        return {row[0]: (row[1], row[2]) for row in rows}
