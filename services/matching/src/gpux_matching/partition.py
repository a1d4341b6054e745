"""One partition's book: its engine, command log and snapshots, behind a lock of its own.

``pricing.offers`` and ``orders.book`` are both keyed by GPU id with the same partition count,
so partition p of each holds the offers and orders of the same GPUs: the book of partition p
is everything about those GPUs. Under the partition's lock a command is applied to its engine
and, in one transaction, the input is claimed in the inbox, the command appended to the
partition's log (``matching.commands``), its events and changed book levels written to the
outbox. Every transaction first locks the partition's head row (``matching.heads``) and
checks it is the command the engine reflects: if another instance logged to the partition
meanwhile (a rebalance this one has not noticed yet), the transaction rolls back, the engine
is rebuilt from the database (latest snapshot + the log after it) and the input runs again.
A failed transaction also leaves the engine dirty; it is rebuilt before anything else runs.
Every ``snapshot_every`` commands, after the commit and still under the lock, the state is
captured and written in the background (``adapters.snapshots``). Expiry and FX rates are
commands of their own, logged with their ``now``, so a replay gives the same results.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal
from typing import Any

import asyncpg
from aiokafka.partitioner import murmur2

from gpux_contracts.events import Envelope
from gpux_matching.adapters import store
from gpux_matching.adapters.snapshots import SnapshotWriter
from gpux_matching.book_levels import book_messages
from gpux_matching.domain import (
    AddOffer,
    Capture,
    Command,
    Expire,
    MatchingEngine,
    PlaceOrder,
    Result,
    SetFx,
    apply,
    books_changed,
    epoch_micros,
)
from gpux_matching.handlers import (
    SCHEMA,
    NotYetError,
    enveloper,
    fresh_engine,
    status_messages,
)
from gpux_platform import outbox
from gpux_platform.clock import Clock

RETRY_WAIT_S = 0.5
STALE_RETRIES = 5
"""Rebuilds in a row before an input is given back to Kafka (another instance keeps logging)."""

log = logging.getLogger("gpux.matching")

Plan = Callable[[asyncpg.Connection, "Partition"], Awaitable[Command | None]]
"""Turns an input into a command for the partition's engine (None: nothing to apply)."""


class StaleError(RuntimeError):
    """Another instance logged to the partition since this engine was built: rebuild."""


class RevokedError(RuntimeError):
    """The partition was revoked from this instance while the input waited for its lock."""


def partition_of(gpu: str, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record keyed by ``gpu``."""
    hashed: int = murmur2(gpu.encode())
    return (hashed & 0x7FFFFFFF) % partitions


def capture(engine: MatchingEngine) -> Capture:
    """The engine's state copied at this point, with the cyclic GC paused meanwhile: the copy
    makes one tuple per entry, and collections over a big book would lengthen the pause."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return engine.capture()
    finally:
        if enabled:
            gc.enable()


async def legacy_engine(
    conn: asyncpg.Connection, partition: int, partitions: int
) -> tuple[int, MatchingEngine]:
    """The state the single pre-partition engine left for ``partition``'s GPUs, at its last
    logged command (``(0, empty)`` when it left nothing)."""
    snapshot = await store.latest_snapshot(conn, store.LEGACY)
    seq, engine = 0, fresh_engine()
    if snapshot is not None:
        seq, engine = snapshot[0], MatchingEngine.restore(snapshot[1])
    commands = await store.commands_after(conn, store.LEGACY, seq)
    if snapshot is None and not commands:
        return 0, engine
    for seq, command in commands:  # noqa: B007 - seq is the last one afterwards
        apply(engine, command)
    body = engine.snapshot()
    for side in ("offers", "orders"):
        body[side] = [e for e in body[side] if partition_of(e["gpu"], partitions) == partition]
    return seq, MatchingEngine.restore(body)


class Partition:
    """The book of one partition: its engine, log position and snapshots, behind one lock."""

    def __init__(
        self,
        number: int,
        pool: asyncpg.Pool,
        clock: Clock,
        snapshot_every: int,
        partitions: int,
    ) -> None:
        self.number = number
        self.pool = pool
        self.clock = clock
        self.snapshot_every = snapshot_every
        self.partitions = partitions
        """How many partitions the input topics have (to split a legacy book by GPU)."""
        self.engine = fresh_engine()
        self.lock = asyncio.Lock()
        self.revoked = False
        """Set while the partition is not this instance's: no command runs on it."""
        self._dirty = True
        """The engine may not be the database's state (not built yet, or a change that was
        not committed): rebuild before going on."""
        self._seq = 0
        """The last logged command the engine reflects (for snapshots)."""
        self._head = 0
        """The partition's head (``matching.heads``) as of that command."""
        self._snapshot_seq = 0
        self._since_snapshot = 0
        self.snapshots = SnapshotWriter(pool, number, self._snapshot_stored)

    # Recovery -------------------------------------------------------------------------------

    async def recover(self) -> None:
        """Rebuild the engine from the database: latest snapshot, then the log after it."""
        async with self.lock:
            await self._rebuild()

    async def _rebuild(self) -> None:
        self._dirty = True
        p = self.number
        # One consistent read: the snapshot, the log after it and the head of the same moment.
        async with (
            self.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            head = await store.head(conn, p)
            snapshot = await store.latest_snapshot(conn, p)
            if snapshot is not None:
                seq, engine = snapshot[0], MatchingEngine.restore(snapshot[1])
                snapshot_seq = seq
            else:
                seq, engine = await legacy_engine(conn, p, self.partitions)
                snapshot_seq = 0  # a legacy start is stored as this partition's first snapshot
            commands = await store.commands_after(conn, p, seq)
        for _, command in commands:
            apply(engine, command)
        if commands:
            seq = commands[-1][0]
        self.engine = engine
        self._seq = seq
        self._head = head
        self._snapshot_seq = snapshot_seq
        self._since_snapshot = len(commands)
        self._dirty = False
        log.info(
            "partition restored",
            extra={"partition": p, "snapshot_seq": snapshot_seq, "replayed": len(commands)},
        )

    async def revoke(self) -> None:
        """The partition left this instance: wait for the command in flight, then stop."""
        async with self.lock:
            self.revoked = True
            await self.snapshots.drain()

    async def shutdown_snapshot(self) -> None:
        """Store a snapshot of the committed state, unless the newest one already is."""
        async with self.lock:
            await self.snapshots.drain()
            if self._dirty or self.revoked or self._seq <= self._snapshot_seq:
                return
            self.snapshots.start(self._seq, capture(self.engine))
            self._since_snapshot = 0
            await self.snapshots.drain()

    def _snapshot_stored(self, seq: int) -> None:
        self._snapshot_seq = max(self._snapshot_seq, seq)

    # Commands -------------------------------------------------------------------------------

    async def consume(self, topic: str, event: Envelope[Any], plan: Plan) -> bool:
        """Turn one input event into a command and apply it once (False: seen before)."""
        for _ in range(STALE_RETRIES):
            try:
                return await self._consume(topic, event, plan)
            except StaleError:
                log.info("partition moved on elsewhere; rebuilding", extra={"p": self.number})
        raise StaleError(f"partition {self.number} keeps changing elsewhere")

    async def _consume(self, topic: str, event: Envelope[Any], plan: Plan) -> bool:
        try:
            async with self.lock:
                if self.revoked:
                    raise RevokedError(f"partition {self.number} is no longer ours")
                if self._dirty:
                    await self._rebuild()
                done: list[int] = []

                async def run(conn: asyncpg.Connection) -> None:
                    await self._fence(conn)
                    command = await plan(conn, self)
                    if command is not None:
                        done.append(await self._execute(conn, command, event))

                try:
                    consumed = await outbox.consume_once(
                        self.pool, SCHEMA, topic, event.event_id, run
                    )
                except StaleError:
                    raise  # dirty already: the retry rebuilds first
                except BaseException:
                    if self._dirty:
                        with contextlib.suppress(Exception):
                            await self._rebuild()
                    raise
                for seq in done:
                    self._committed(seq)
                return consumed
        except NotYetError:
            await asyncio.sleep(RETRY_WAIT_S)  # outside the lock; the record comes again
            raise

    async def tick(self) -> None:
        """Expire what is due now; logged only when something expired."""
        await self._own_command(lambda: Expire(epoch_micros(self.clock.now())))

    async def set_rates(self, rates: Mapping[str, Decimal]) -> None:
        """Bring the engine to ``rates`` (the latest known), logged only when one differs."""

        def changed() -> Command | None:
            current = self.engine.rates
            diff = {c: r for c, r in rates.items() if current.get(c) != r}
            return SetFx(epoch_micros(self.clock.now()), diff) if diff else None

        await self._own_command(changed)

    async def _own_command(self, make: Callable[[], Command | None]) -> None:
        """Apply a command of the book's own (no input event) and log it if it changed
        anything visible."""
        async with self.lock:
            if self.revoked:
                return
            if self._dirty:
                await self._rebuild()
            command = make()
            if command is None:
                return
            self._dirty = True
            result = apply(self.engine, command)
            visible = result.offers or result.orders or result.fills or result.levels
            if not visible and not isinstance(command, SetFx):  # a new rate is always logged
                self._dirty = False  # nothing visible changed: no need to log it
                return
            try:
                async with self.pool.acquire() as conn, conn.transaction():
                    await self._fence(conn)
                    seq = await self._record(conn, command, result, None)
            except StaleError:
                return  # dirty: the next command rebuilds first (the new state decides)
            except BaseException:
                with contextlib.suppress(Exception):
                    await self._rebuild()
                raise
            self._committed(seq)

    async def _fence(self, conn: asyncpg.Connection) -> None:
        """Lock the partition's head for this transaction; stale if it moved elsewhere."""
        if await store.lock_head(conn, self.number) != self._head:
            self._dirty = True
            raise StaleError(f"partition {self.number} was logged to elsewhere")

    async def _execute(
        self, conn: asyncpg.Connection, command: Command, cause: Envelope[Any]
    ) -> int:
        if isinstance(command, AddOffer | PlaceOrder) and command.currency not in self.engine.rates:
            raise NotYetError(f"no FX rate for {command.currency} yet")
        self._dirty = True
        result = apply(self.engine, command)
        return await self._record(conn, command, result, cause)

    async def _record(
        self,
        conn: asyncpg.Connection,
        command: Command,
        result: Result,
        cause: Envelope[Any] | None,
    ) -> int:
        """Log the command and write its events (in the caller's transaction)."""
        seq = await store.append_command(conn, self.number, command)
        command_id = f"matching-command-{seq}"  # seq is global: unique across partitions
        now = self.clock.now()
        messages = await status_messages(conn, result, cause, command_id, now)
        books = books_changed(self.engine, command, result)
        if books:
            base = cause.event_id if cause is not None else command_id
            envelope = enveloper(cause, command_id, now)
            messages += book_messages(self.engine, books, seq, now, envelope, base)
        if messages:
            await outbox.add(conn, SCHEMA, messages)
        return seq

    def _committed(self, seq: int) -> None:
        """Command ``seq`` is committed and the engine holds exactly its result: the
        consistent point to capture a due snapshot at (written in the background)."""
        self._dirty = False
        self._seq = self._head = seq
        self._since_snapshot += 1
        if self._since_snapshot >= self.snapshot_every and not self.snapshots.busy:
            self.snapshots.start(seq, capture(self.engine))
            self._since_snapshot = 0
