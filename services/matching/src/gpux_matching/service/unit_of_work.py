"""What matching's handlers work through: its repositories, the inbox and the outbox.

``MatchingUnitOfWork`` is one transaction over every repository (``market.sessions`` needs
nothing more). ``BookUnitOfWork`` is a unit of one partition of the book: entered under the
partition's lock with its head row locked (``Partition.unit``), it also carries the
partition's engine and the journal of the commands applied in it; its ``commit`` logs those
commands in one insert and queues their events (``journal.seal``) before the outbox rows
are written and the transaction commits. Implementations: ``adapters.postgres`` (the real
ones) and ``adapters.memory`` (the fakes the service tests use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from gpux_contracts.market import MarketStateChanged
from gpux_matching.domain import Capture, Command
from gpux_platform.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from gpux_matching.service.journal import Journal
    from gpux_matching.service.partition import Partition


class Offers(Protocol):
    """Every offer the book was given: its owner and the revision the book holds."""

    async def revision(self, offer_id: str) -> int | None:
        """The last revision of the offer the book was given, or None."""
        ...

    async def save(self, offer_id: str, seller_id: str, gpu: str, revision: int) -> None:
        """Remember the offer's owner and the revision the book holds now."""
        ...

    async def owners(self, offer_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(seller id, gpu) of each known offer."""
        ...


class Orders(Protocol):
    """Every funded order the book was given, with its buyer and GPU (updates name neither)."""

    async def known(self, order_id: str) -> bool:
        """Whether the book was already given this order."""
        ...

    async def save(self, order_id: str, buyer_id: str, gpu: str) -> None:
        """Remember the order (a redelivered funding is then not placed twice)."""
        ...

    async def owners(self, order_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(buyer id, gpu) of each known order."""
        ...


class MarketStates(Protocol):
    """The latest market session per scope (``*``: every GPU model; else one GPU id)."""

    async def record(self, changed: MarketStateChanged) -> None:
        """Keep the change unless the scope holds a newer one."""
        ...

    async def halted(self, gpu: str) -> bool:
        """True while the whole market or this GPU model is halted (nothing stored: open)."""
        ...


class CommandLog(Protocol):
    """Each partition's command log, its head (the last command logged) and its snapshots.

    Sequence numbers are global (unique across partitions) and increase within a partition.
    """

    async def lock_head(self, partition: int) -> int:
        """The partition's head (0: nothing logged), locked until the unit ends: one unit
        per partition at a time, across instances."""
        ...

    async def head(self, partition: int) -> int:
        """The partition's head, without a lock."""
        ...

    async def append(self, partition: int, commands: Sequence[Command]) -> list[int]:
        """Log commands in order (one insert) and move the head to the last; their seqs."""
        ...

    async def commands_after(self, partition: int, seq: int) -> list[tuple[int, Command]]:
        """Every command logged for ``partition`` after ``seq``, in order."""
        ...

    async def save_snapshot(
        self, partition: int, seq: int, body: str | Mapping[str, Any], keep: int = 2
    ) -> None:
        """Store the state after command ``seq`` (JSON text or plain data); the
        partition's older snapshots beyond ``keep`` go."""
        ...

    async def latest_snapshot(self, partition: int) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot of ``partition`` as (seq, body), or None."""
        ...


class MatchingUnitOfWork(UnitOfWork, Protocol):
    """One transaction over matching's repositories, its inbox and its outbox."""

    offers: Offers
    orders: Orders
    market: MarketStates
    commands: CommandLog


class BookUnitOfWork(MatchingUnitOfWork, Protocol):
    """A unit of one partition of the book (see the module's docstring)."""

    @property
    def partition(self) -> Partition:
        """The partition this unit applies commands to (its engine, clock and number)."""
        ...

    @property
    def journal(self) -> Journal:
        """The commands applied in this unit, logged and announced when it commits."""
        ...


class SnapshotWriter(Protocol):
    """Stores captures of one partition's engine, one at a time, off the command path."""

    @property
    def busy(self) -> bool:
        """True while a snapshot is being written."""
        ...

    def start(self, seq: int, capture: Capture) -> None:
        """Store ``capture``, the state after logged command ``seq`` (not while ``busy``)."""
        ...

    async def drain(self) -> None:
        """Wait for the snapshot in flight, if any."""
        ...


class PartitionStore(Protocol):
    """Where partitions keep their state: units of work, consistent reads, snapshots."""

    def unit(self, partition: Partition) -> AbstractAsyncContextManager[BookUnitOfWork]:
        """A unit of work of ``partition`` (``Partition.unit`` fences it)."""
        ...

    def reading(self) -> AbstractAsyncContextManager[CommandLog]:
        """The command log as of one moment (a read-only snapshot of the database)."""
        ...

    def snapshots(self, partition: int, saved: Callable[[int], None]) -> SnapshotWriter:
        """The snapshot writer of ``partition``; ``saved(seq)`` once each one is stored."""
        ...
