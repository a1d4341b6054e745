"""One partition's book: its engine, log position and snapshots, behind a lock of its own.

``pricing.offers``, ``orders.book`` and ``capacity.commands`` are keyed by GPU id with the same
partition count, so partition p of each holds the offers, orders and leases' ends of the same
GPUs: the book of partition p is everything about those GPUs. Under the partition's lock, a
batch of its inputs is applied through units of work (``gpux_platform.batches.BatchHandler``):
each unit claims its inputs in the inbox, applies their commands to the engine, and at commit
logs the commands to the partition's log (``matching.commands``, one insert) and writes their
events, then the levels of each book the unit changed (once per book, as the unit left it), to
the outbox, in one transaction. Entering a unit locks the partition's head row
(``matching.heads``) and checks it is the command the engine reflects: if another instance
logged to the partition meanwhile (a rebalance this one has not noticed yet), the unit is
refused, the engine is rebuilt from the database (latest snapshot + the log after it) and the
batch runs again. A unit that rolls back leaves the engine dirty; it is rebuilt before the next
unit. Every ``snapshot_every`` commands, after a commit and still under the lock, the state is
captured and written in the background. Expiry, FX rates and sellers' reliability rates are
commands of their own, logged with their ``now``, so a replay gives the same results.

Until the engine holds the sellers' current rates (since it was built, until the reliability
feed was read to its end and its rates logged here: ``reliability_current``), nothing that
could match an order with a minimum reliability runs (``awaits_reliability``: such an order,
and while such orders rest, offers, changes, releases and FX moves wait), so no order with a
minimum trades on a rate that was not the latest at start. Only a build from a log this
instance did not write last (assignment, start, another instance logged meanwhile) makes the
rates old again: a rebuild after one of its own units rolled back replays the rates it logged
itself, so the batch's other units go on and the record that fails alone is set aside (were
it otherwise, the halves of a split batch would wait for a catch-up that only a redelivery
brings, and the batch would come back forever).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpux_contracts.events import Envelope, Payload
from gpux_contracts.money import MICROS_PER_UNIT, REFERENCE_CURRENCY
from gpux_contracts.topics import Topic
from gpux_matching.domain import (
    AddOffer,
    Capture,
    ChangeOffer,
    Command,
    Expire,
    MatchingEngine,
    PlaceOrder,
    ReleaseLease,
    Result,
    SetFx,
    SetSellerReliability,
    apply,
    epoch_micros,
    partition_of,
)
from gpux_matching.domain.reliability import newer
from gpux_matching.service.publishing import Shown
from gpux_matching.service.unit_of_work import BookUnitOfWork, CommandLog, PartitionStore
from gpux_platform.batches import BatchHandler, Handler, Outcome, RetryLater
from gpux_platform.clock import Clock

STALE_RETRIES = 5
"""Rebuilds in a row before a batch is given back to Kafka (another instance keeps logging)."""
LEGACY = -1
"""The partition of what the single engine logged before the book was kept per partition."""

_RATES = (SetFx, SetSellerReliability)
"""The book's own commands that are always logged: what they set decides later matches."""

log = logging.getLogger("gpux.matching")


class NotYetError(RetryLater):
    """An input that cannot be applied yet (its currency has no FX rate, or the sellers'
    rates are not current yet: ``Partition.awaits_reliability``); retried later."""


class StaleError(RetryLater):
    """Another instance logged to the partition since this engine was built: rebuild."""


class RevokedError(RuntimeError):
    """The partition was revoked from this instance while the input waited for its lock."""


def fresh_engine() -> MatchingEngine:
    """An empty book that knows only the reference currency."""
    return MatchingEngine({str(REFERENCE_CURRENCY): MICROS_PER_UNIT})


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
    commands: CommandLog, partition: int, partitions: int
) -> tuple[int, MatchingEngine]:
    """The state the single pre-partition engine left for ``partition``'s GPUs, at its last
    logged command (``(0, empty)`` when it left nothing)."""
    snapshot = await commands.latest_snapshot(LEGACY)
    seq, engine = 0, fresh_engine()
    if snapshot is not None:
        seq, engine = snapshot[0], MatchingEngine.restore(snapshot[1])
    logged = await commands.commands_after(LEGACY, seq)
    if snapshot is None and not logged:
        return 0, engine
    for seq, command in logged:  # noqa: B007 - seq is the last one afterwards
        apply(engine, command)
    body = engine.snapshot()
    for side in ("offers", "orders"):
        body[side] = [e for e in body[side] if partition_of(e["gpu"], partitions) == partition]
    return seq, MatchingEngine.restore(body)


def execute(uow: BookUnitOfWork, command: Command, cause: Envelope[Any]) -> Result:
    """Apply an input's command to the unit's engine and note it in the unit's journal."""
    part = uow.partition
    if isinstance(command, AddOffer | PlaceOrder) and command.currency not in part.engine.rates:
        raise NotYetError(f"no FX rate for {command.currency} yet")
    if part.awaits_reliability(command):
        raise NotYetError("sellers' reliability rates not current yet")
    result = part.apply(command)
    note(uow, command, result, cause)
    return result


def note(
    uow: BookUnitOfWork, command: Command, result: Result, cause: Envelope[Any] | None
) -> None:
    """Note in the unit's journal a command that its partition's engine just applied."""
    part = uow.partition
    uow.journal.note(
        part.engine,
        command,
        result,
        cause=cause,
        now=part.clock.now(),
        position=len(uow.outbox.messages),
    )


class Partition:
    """The book of one partition: its engine, log position and snapshots, behind one lock."""

    def __init__(
        self,
        number: int,
        *,
        store: PartitionStore,
        clock: Clock,
        snapshot_every: int,
        partitions: int,
    ) -> None:
        self.number = number
        self.store = store
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
        self.shown: dict[tuple[str, str], Shown] = {}
        """What this partition last published of each book (gpu, tier) since it was built:
        a unit does not publish a book's levels again unchanged. Forgotten at a rebuild
        (another instance may have published since), so the next unit publishes again."""
        self.snapshots = store.snapshots(number, self._snapshot_stored)
        self.reliability_current = False
        """The engine holds the sellers' latest rates known at start (``set_reliability``
        since it was built from a log another instance may have written last; a rebuild
        from the head this instance left keeps it)."""
        self._minimums: bool | None = None
        """Whether bids with a minimum reliability rest, while not current (None: not
        looked at since the build). None can be placed meanwhile, so a False holds; a True
        may outlive the last of them (cancelled, expired), which only waits longer."""

    # Recovery -------------------------------------------------------------------------------

    async def recover(self) -> None:
        """Rebuild the engine from the database (latest snapshot, then the log after it), as
        when the partition is assigned: the sellers' rates are to be caught up again."""
        async with self.lock:
            self.reliability_current = False
            await self._rebuild()

    async def _rebuild(self) -> None:
        """The engine from the database; the sellers' rates count as old again unless the
        head is the one this instance left (then the log ends with what it logged itself:
        the rates it had, or a unit of its own that rolled back changed nothing there)."""
        self._dirty = True
        self.shown = {}
        self._minimums = None
        p = self.number
        # One consistent read: the snapshot, the log after it and the head of the same moment.
        async with self.store.reading() as commands:
            head = await commands.head(p)
            snapshot = await commands.latest_snapshot(p)
            if snapshot is not None:
                seq, engine = snapshot[0], MatchingEngine.restore(snapshot[1])
                snapshot_seq = seq
            else:
                seq, engine = await legacy_engine(commands, p, self.partitions)
                snapshot_seq = 0  # a legacy start is stored as this partition's first snapshot
            logged = await commands.commands_after(p, seq)
        if head != self._head:  # logged elsewhere since (or never built): rates may be old
            self.reliability_current = False
        for _, command in logged:
            apply(engine, command)
        if logged:
            seq = logged[-1][0]
        self.engine = engine
        self._seq = seq
        self._head = head
        self._snapshot_seq = snapshot_seq
        self._since_snapshot = len(logged)
        self._dirty = False
        log.info(
            "partition restored",
            extra={"partition": p, "snapshot_seq": snapshot_seq, "replayed": len(logged)},
        )

    async def revoke(self) -> None:
        """The partition left this instance: wait for the batch in flight, then stop."""
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

    # Units of work --------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def unit(self) -> AsyncIterator[BookUnitOfWork]:
        """A unit of work of this partition (call under the lock): the engine rebuilt first
        if it is dirty, the head locked and checked (``StaleError`` if it moved elsewhere)."""
        if self._dirty:
            await self._rebuild()
        async with self._fenced() as uow:
            yield uow

    @contextlib.asynccontextmanager
    async def _fenced(self) -> AsyncIterator[BookUnitOfWork]:
        async with self.store.unit(self) as uow:
            if await uow.commands.lock_head(self.number) != self._head:
                self._dirty = True
                raise StaleError(f"partition {self.number} was logged to elsewhere")
            yield uow

    def awaits_reliability(self, command: Command) -> bool:
        """Whether ``command`` must wait for the sellers' current rates: an order with a
        minimum reliability, or, while such orders rest, what could fill them (an offer, a
        change, a release, an FX move). False once ``reliability_current``."""
        if self.reliability_current:
            return False
        if isinstance(command, PlaceOrder):
            return command.min_reliability_bp is not None
        if isinstance(command, AddOffer | ChangeOffer | ReleaseLease | SetFx):
            if self._minimums is None:
                self._minimums = self.engine.holds_minimums()
            return self._minimums
        return False

    def now_micros(self) -> int:
        """The partition's clock now, as the engine's instants go (epoch microseconds)."""
        return epoch_micros(self.clock.now())

    def apply(self, command: Command) -> Result:
        """Apply a command to the engine; it is dirty until the unit commits."""
        self._dirty = True
        return apply(self.engine, command)

    def committed(
        self, seqs: Sequence[int], shown: Mapping[tuple[str, str], Shown] | None = None
    ) -> None:
        """A unit that logged ``seqs`` and published ``shown`` (the books' levels) committed
        and the engine holds exactly its result: the consistent point to capture a due
        snapshot at (written in the background)."""
        if not seqs:
            return
        self.shown.update(shown or {})
        seq = seqs[-1]
        self._dirty = False
        self._seq = self._head = seq
        self._since_snapshot += len(seqs)
        if self._since_snapshot >= self.snapshot_every and not self.snapshots.busy:
            self.snapshots.start(seq, capture(self.engine))
            self._since_snapshot = 0

    # Inputs ---------------------------------------------------------------------------------

    async def consume(
        self,
        topic: Topic,
        events: Sequence[Envelope[Any]],
        handlers: Mapping[type[Payload], Handler[BookUnitOfWork]],
    ) -> Outcome:
        """Apply a batch of this partition's inputs of ``topic``, each once, in order."""
        batch = BatchHandler(topic, handlers, self.unit)
        for _ in range(STALE_RETRIES):
            try:
                async with self.lock:
                    if self.revoked:
                        raise RevokedError(f"partition {self.number} is no longer ours")
                    return await self._apply(batch, events)
            except StaleError:
                log.info("partition moved on elsewhere; rebuilding", extra={"p": self.number})
        raise StaleError(f"partition {self.number} keeps changing elsewhere")

    async def _apply(
        self, batch: BatchHandler[BookUnitOfWork], events: Sequence[Envelope[Any]]
    ) -> Outcome:
        try:
            return await batch.apply(events)
        except StaleError:
            raise  # dirty already: the retry rebuilds first
        except BaseException:
            if self._dirty:  # a unit rolled back: the engine is the database's again at once
                with contextlib.suppress(Exception):
                    await self._rebuild()
            raise

    # The book's own commands ----------------------------------------------------------------

    async def tick(self) -> None:
        """Expire what is due now; logged only when something expired."""
        await self._own_command(lambda: Expire(self.now_micros()))

    async def set_rates(self, rates: Mapping[str, Decimal]) -> None:
        """Bring the engine to ``rates`` (the latest known), logged only when one differs."""

        def changed() -> Command | None:
            current = self.engine.rates
            diff = {c: r for c, r in rates.items() if current.get(c) != r}
            if not diff:
                return None
            command = SetFx(self.now_micros(), diff)
            return None if self.awaits_reliability(command) else command  # the next tick

        await self._own_command(changed)

    async def set_reliability(
        self, rates_bp: Mapping[str, int], totals: Mapping[str, int] | None = None
    ) -> None:
        """Bring the engine to the sellers' latest rates (basis points), each counted over
        ``totals[seller]`` leases (absent: 0), logged only when one is newer than the
        engine's (a rate or a total that differs, counted over at least as many); from
        then on the engine is current (``reliability_current``). A seller the engine holds
        counted over more (logged by another instance that had read further) keeps it."""
        counted = totals or {}

        def changed() -> Command | None:
            rates, held = self.engine.reliability, self.engine.reliability_totals
            diff: dict[str, int] = {}
            for seller, rate in rates_bp.items():
                total, was = counted.get(seller, 0), held.get(seller, 0)
                if newer(total, was) and (rates.get(seller) != rate or total != was):
                    diff[seller] = rate
            if not diff:
                return None
            news = {s: counted[s] for s in diff if s in counted} or None
            return SetSellerReliability(self.now_micros(), diff, news)

        if await self._own_command(changed):
            self.reliability_current = True

    async def _own_command(self, make: Callable[[], Command | None]) -> bool:
        """Apply a command of the book's own (no input event) and log it if it changed
        anything visible; False when the engine may not reflect it (revoked, or fenced)."""
        async with self.lock:
            if self.revoked:
                return False
            if self._dirty:
                await self._rebuild()
            command = make()
            if command is None:
                return True
            result = self.apply(command)
            visible = any(
                (result.offers, result.orders, result.fills, result.levels, result.interruptions)
            )
            if not visible and not isinstance(command, _RATES):  # a new rate is always logged
                self._dirty = False  # nothing visible changed: no need to log it
                return True
            try:
                async with self._fenced() as uow:
                    note(uow, command, result, None)
                    await uow.commit()
            except StaleError:
                return False  # dirty: the next command rebuilds first (the new state decides)
            return True
