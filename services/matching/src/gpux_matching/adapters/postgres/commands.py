"""Each partition's command log, its head and its snapshots (``matching.commands``,
``matching.heads``, ``matching.snapshots``).

Commands are stored as JSON (``gpux_matching.domain.encode_command``). ``seq`` is one global
bigserial, so command ids and book-level sequences are unique across partitions and increase
within one: every unit of a partition locks its head row first, so a later unit draws its
numbers after an earlier one committed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg

from gpux_matching.domain import Command, decode_command, encode_command

# The numbers are drawn first and handed out in ascending order, so the n-th command gets the
# n-th smallest whatever order the database evaluates the rows in.
_APPEND = """
WITH drawn AS (
    SELECT nextval(pg_get_serial_sequence('matching.commands', 'seq')) AS seq
    FROM generate_series(1, $4::int)
), numbered AS (
    SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM drawn
), added AS (
    INSERT INTO matching.commands (seq, partition, kind, body)
    SELECT numbered.seq, $1, c.kind, c.body::jsonb
    FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS c (kind, body, n)
    JOIN numbered USING (n)
    RETURNING seq
), moved AS (
    UPDATE matching.heads SET seq = (SELECT max(seq) FROM added) WHERE partition = $1
)
SELECT seq FROM added ORDER BY seq
"""


class PostgresCommandLog:
    """The command log on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def lock_head(self, partition: int) -> int:
        """The partition's last logged command (0: none), its row locked until the
        transaction ends: one unit per partition at a time, across instances."""
        await self.conn.execute(
            "INSERT INTO matching.heads (partition, seq) VALUES ($1, 0) ON CONFLICT DO NOTHING",
            partition,
        )
        seq: int = await self.conn.fetchval(
            "SELECT seq FROM matching.heads WHERE partition = $1 FOR UPDATE", partition
        )
        return seq

    async def head(self, partition: int) -> int:
        """The partition's last logged command (0: none), without a lock."""
        seq: int | None = await self.conn.fetchval(
            "SELECT seq FROM matching.heads WHERE partition = $1", partition
        )
        return seq or 0

    async def append(self, partition: int, commands: Sequence[Command]) -> list[int]:
        """Log commands of ``partition`` in order, in one statement, and move its head to the
        last (after ``lock_head``); returns their sequence numbers."""
        if not commands:
            return []
        encoded = [encode_command(command) for command in commands]
        rows = await self.conn.fetch(
            _APPEND,
            partition,
            [kind for kind, _ in encoded],
            [body for _, body in encoded],
            len(encoded),
        )
        return [row["seq"] for row in rows]

    async def commands_after(self, partition: int, seq: int) -> list[tuple[int, Command]]:
        """Every command logged for ``partition`` after ``seq``, in order (``LEGACY``: the log
        from before partitions)."""
        rows = await self.conn.fetch(
            "SELECT seq, kind, body FROM matching.commands"
            " WHERE partition = $1 AND seq > $2 ORDER BY seq",
            partition,
            seq,
        )
        return [(row["seq"], decode_command(row["kind"], row["body"])) for row in rows]

    async def save_snapshot(
        self, partition: int, seq: int, body: str | Mapping[str, Any], keep: int = 2
    ) -> None:
        """Store a partition's state after command ``seq`` (JSON text or plain data), in a
        transaction of its own (or the caller's); its older snapshots beyond ``keep`` go."""
        text = body if isinstance(body, str) else json.dumps(body)
        async with self.conn.transaction():
            await self.conn.execute(
                "INSERT INTO matching.snapshots (partition, seq, body) VALUES ($1, $2, $3::jsonb)"
                " ON CONFLICT (partition, seq) DO NOTHING",
                partition,
                seq,
                text,
            )
            await self.conn.execute(
                "DELETE FROM matching.snapshots WHERE partition = $1 AND seq NOT IN"
                " (SELECT seq FROM matching.snapshots WHERE partition = $1"
                "  ORDER BY seq DESC LIMIT $2)",
                partition,
                keep,
            )

    async def latest_snapshot(self, partition: int) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot of ``partition`` as (seq, body), or None (``LEGACY``: the one
        from before partitions)."""
        row = await self.conn.fetchrow(
            "SELECT seq, body FROM matching.snapshots WHERE partition = $1"
            " ORDER BY seq DESC LIMIT 1",
            partition,
        )
        if row is None:
            return None
        return row["seq"], json.loads(row["body"])
