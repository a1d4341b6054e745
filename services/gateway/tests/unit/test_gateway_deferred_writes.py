"""Deferred writes run in the order given, each run of one statement as one executemany."""

from __future__ import annotations

from typing import Any, cast

import asyncpg
import pytest

from gpux_gateway.adapters.postgres.deferred import Deferred

pytestmark = pytest.mark.unit


class Recorder:
    """Stands in for a connection: records what ``executemany`` was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[tuple[Any, ...]]]] = []

    async def executemany(self, sql: str, args: list[tuple[Any, ...]]) -> None:
        self.calls.append((sql, args))


async def test_consecutive_statements_of_one_sql_are_one_call_and_the_order_is_kept() -> None:
    deferred = Deferred()
    for sql, arg in (("A", 1), ("A", 2), ("B", 3), ("A", 4), ("A", 5), ("A", 6)):
        deferred.add(sql, arg)
    conn = Recorder()
    await deferred.run(cast(asyncpg.Connection, conn))
    assert conn.calls == [("A", [(1,), (2,)]), ("B", [(3,)]), ("A", [(4,), (5,), (6,)])]
    await deferred.run(cast(asyncpg.Connection, conn))  # run empties the queue
    assert len(conn.calls) == 3
