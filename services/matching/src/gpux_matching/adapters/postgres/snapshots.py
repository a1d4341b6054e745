"""Snapshots written off the command path, so a big book never stalls consumption.

The partition takes a ``Capture`` under its lock right after a unit committed (rows of values,
copied in a few tens of milliseconds for 100,000 orders: the only pause consumers see). A
background task then turns it into JSON in slices (``gpux_matching.domain.json_parts``),
yielding to the event loop between slices, and stores it in a transaction of its own.
Recovery stays exact: the capture is the state after logged command ``seq`` (the log's
sequence, not the engine's own entry counter) and nothing else, and a rebuild replays the
partition's log after its newest stored snapshot, whichever that is. One write at a time:
while one is in flight, a due snapshot waits for the next unit. A failed write is logged; the
next due snapshot tries again (the log still holds every command since the last stored one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import asyncpg

from gpux_matching.adapters.postgres.commands import PostgresCommandLog
from gpux_matching.domain import Capture, json_parts
from gpux_matching.domain.snapshot import CHUNK

log = logging.getLogger("gpux.matching")


async def encode(capture: Capture, chunk: int = CHUNK) -> str:
    """``json_parts`` joined, giving the event loop a turn after every piece."""
    parts = []
    for part in json_parts(capture, chunk):
        parts.append(part)
        await asyncio.sleep(0)
    return "".join(parts)


class SnapshotWriter:
    """Encodes and stores one capture of one partition's engine at a time in the background."""

    def __init__(self, pool: asyncpg.Pool, partition: int, saved: Callable[[int], None]) -> None:
        self.pool = pool
        self.partition = partition
        self.saved = saved
        """Called with the command sequence of each snapshot once it is stored."""
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """True while a snapshot is being encoded or written."""
        return self._task is not None and not self._task.done()

    def start(self, seq: int, capture: Capture) -> None:
        """Write ``capture``, the state after logged command ``seq``, in the background (the
        caller checks ``busy`` first)."""
        if self.busy:
            raise RuntimeError("a snapshot is already being written")
        self._task = asyncio.create_task(
            self._write(seq, capture), name=f"snapshot-{self.partition}-{seq}"
        )

    async def drain(self) -> None:
        """Wait for the snapshot in flight, if any."""
        if self._task is not None:
            await asyncio.wait([self._task])

    async def _write(self, seq: int, capture: Capture) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            body = await encode(capture)
            async with self.pool.acquire() as conn:
                await PostgresCommandLog(conn).save_snapshot(self.partition, seq, body)
        except Exception as exc:  # the next due snapshot tries again
            log.warning(
                "snapshot not stored",
                extra={"partition": self.partition, "seq": seq, "error": repr(exc)},
            )
            return
        self.saved(seq)
        log.info(
            "snapshot stored",
            extra={
                "partition": self.partition,
                "seq": seq,
                "orders": len(capture.orders),
                "offers": len(capture.offers),
                "bytes": len(body),
                "seconds": round(loop.time() - started, 3),
            },
        )
