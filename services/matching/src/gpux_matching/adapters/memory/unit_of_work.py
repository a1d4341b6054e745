"""The fake unit of work and partition store: one ``MemoryMatching`` plays every unit.

Units run one after another in a service test, so one object serves them all: ``bound``
points it at the partition a unit is for (or at none, for ``market.sessions``). Its state is
copied on entering and put back on a rollback (``MemoryUnitOfWork``), as a transaction would.
Snapshots are stored at once, as JSON, in the same state.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Self

from gpux_matching.adapters.memory.repositories import (
    MatchingState,
    MemoryCommandLog,
    MemoryMarketStates,
    MemoryOffers,
    MemoryOrders,
    store_snapshot,
)
from gpux_matching.domain import Capture, json_parts
from gpux_matching.service.journal import Journal, seal
from gpux_matching.service.partition import Partition
from gpux_matching.service.unit_of_work import CommandLog, MarketStates, Offers, Orders
from gpux_platform.unit_of_work import MemoryUnitOfWork


class MemoryMatching(MemoryUnitOfWork):
    """Matching's repositories over a ``MatchingState``, as one unit of work at a time."""

    state: MatchingState
    offers: Offers
    orders: Orders
    market: MarketStates
    commands: CommandLog

    def __init__(self, state: MatchingState | None = None) -> None:
        super().__init__(state or MatchingState())
        self._partition: Partition | None = None
        self._journal = Journal()

    def bound(self, partition: Partition | None) -> Self:
        """This unit, for ``partition``'s next unit of work (None: no partition's)."""
        self._partition = partition
        return self

    @property
    def partition(self) -> Partition:
        """The partition of the unit (``bound`` first)."""
        if self._partition is None:
            raise RuntimeError("this unit is not bound to a partition")
        return self._partition

    @property
    def journal(self) -> Journal:
        """The commands applied in this unit."""
        return self._journal

    def _begun(self) -> None:
        self.offers = MemoryOffers(self.state)
        self.orders = MemoryOrders(self.state)
        self.market = MemoryMarketStates(self.state)
        self.commands = MemoryCommandLog(self.state)
        self._journal = Journal()

    async def commit(self) -> None:
        """Log the unit's commands and queue their events, then keep everything."""
        if self._partition is not None:
            await seal(self)
        await super().commit()

    async def after_commit(self) -> None:
        """The partition's engine now is the committed state again."""
        if self._partition is not None:
            self._partition.committed(self._journal.seqs, self._journal.shown)


class MemorySnapshots:
    """Stores each capture at once, as the JSON the real writer would store."""

    def __init__(self, uow: MemoryMatching, partition: int, saved: Callable[[int], None]) -> None:
        self.uow = uow
        self.partition = partition
        self.saved = saved
        self.stored: list[int] = []
        """The seq of every snapshot stored, in order."""

    @property
    def busy(self) -> bool:
        """Never: a snapshot is stored when it starts."""
        return False

    def start(self, seq: int, capture: Capture) -> None:
        """Store ``capture``, the state after logged command ``seq``."""
        store_snapshot(self.uow.state, self.partition, seq, "".join(json_parts(capture)))
        self.stored.append(seq)
        self.saved(seq)

    async def drain(self) -> None:
        """Nothing is ever in flight."""


class MemoryPartitionStore:
    """The partitions' store over one ``MemoryMatching``."""

    def __init__(self, uow: MemoryMatching | None = None) -> None:
        self.uow = uow or MemoryMatching()
        self.writers: dict[int, MemorySnapshots] = {}

    def unit(self, partition: Partition) -> MemoryMatching:
        """The unit of work, bound to ``partition``."""
        return self.uow.bound(partition)

    def sessions(self) -> MemoryMatching:
        """The unit of work, bound to no partition (``market.sessions``)."""
        return self.uow.bound(None)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[CommandLog]:
        """The command log as committed (no unit is open while a partition rebuilds)."""
        yield MemoryCommandLog(self.uow.state)

    def snapshots(self, partition: int, saved: Callable[[int], None]) -> MemorySnapshots:
        """The snapshot writer of ``partition``."""
        writer = self.writers[partition] = MemorySnapshots(self.uow, partition, saved)
        return writer
