"""This instance's share of the book: one ``Partition`` per input partition Kafka assigned it.

Instances of matching form one consumer group over ``pricing.offers``, ``orders.book`` and
``capacity.commands`` (one subscriber for the three, with the range assignor, so partition p of
each topic goes to the same instance). ``assign`` rebuilds a partition's engine from its
snapshot and log when Kafka gives it to this instance; ``revoke`` stops it once the batch in
flight is done. FX rates are not partitioned: every instance reads ``fx.rates`` whole, without a
group (``FxFeed``), and each owned partition logs a ``SetFx`` command of its own whenever its
engine's rates differ from the latest (on a new rate, after it was assigned, and at every expiry
tick), so a replay of the partition's log alone gives the same results. Sellers' reliability
goes the same way: every instance reads ``billing.reliability`` whole (``ReliabilityFeed``) and
each owned partition logs a ``SetSellerReliability`` with the rates, and the totals they
were counted over, newer than its engine's (the engine keeps a seller's rate counted over
more, so a lagging feed never steps one back): at the same moments as FX rates (and before
them), before a batch of a partition rebuilt since from a log another instance wrote to
(fenced), and whenever new ones arrived (``next_reliability``: a burst of records costs one
command per partition, not one each).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpux_contracts.events import Envelope, Payload
from gpux_contracts.topics import Topic
from gpux_matching.service.fx import FxFeed
from gpux_matching.service.partition import Partition, RevokedError
from gpux_matching.service.reliability import ReliabilityFeed
from gpux_matching.service.unit_of_work import BookUnitOfWork, PartitionStore
from gpux_platform.batches import Handler, Outcome
from gpux_platform.clock import Clock

log = logging.getLogger("gpux.matching")


class Partitions:
    """The partitions this instance owns, each with its engine behind its own lock."""

    def __init__(
        self, store: PartitionStore, clock: Clock, *, snapshot_every: int, partitions: int
    ) -> None:
        self.store = store
        self.clock = clock
        self.snapshot_every = snapshot_every
        self.partitions = partitions
        self.fx = FxFeed()
        self.reliability = ReliabilityFeed()
        self._reliability_arrived = asyncio.Event()
        self._parts: dict[int, Partition] = {}
        self._owned: set[int] | None = None
        """Partitions Kafka assigned (None until the first assignment: keep what runs)."""

    def _new(self, number: int) -> Partition:
        return Partition(
            number,
            store=self.store,
            clock=self.clock,
            snapshot_every=self.snapshot_every,
            partitions=self.partitions,
        )

    def owned(self) -> list[int]:
        """The partitions this instance holds now."""
        return sorted(n for n, part in self._parts.items() if not part.revoked)

    def partition(self, number: int) -> Partition:
        """The engine of ``number`` (a partition this instance holds)."""
        return self._parts[number]

    async def assign(self, numbers: Iterable[int]) -> None:
        """Kafka gave this instance these partitions: rebuild the new ones from the database.

        aiokafka rebalances eagerly (every member gives up all its partitions, then receives
        its new share), so a partition it gets back is kept as it is rather than rebuilt: if
        another instance logged to it in between, the head check of its next unit notices
        and rebuilds it then.
        """
        numbers = set(numbers)
        for number in [n for n, part in self._parts.items() if part.revoked]:
            if number not in numbers:
                del self._parts[number]
        self._owned = (self._owned or set()) | numbers
        for number in sorted(numbers):
            part = self._parts.get(number)
            if part is None:
                part = self._new(number)
                await part.recover()
                self._parts[number] = part
            part.revoked = False
            await self._catch_up(part)
        log.info("partitions assigned", extra={"partitions": sorted(numbers)})

    async def revoke(self, numbers: Iterable[int]) -> None:
        """These partitions leave this instance: finish the batch in flight, stop them
        (kept until the next assignment, which may give them back)."""
        numbers = set(numbers)
        if self._owned is not None:
            self._owned -= numbers
        for number in sorted(numbers):
            part = self._parts.get(number)
            if part is not None:
                await part.revoke()
        log.info("partitions revoked", extra={"partitions": sorted(numbers)})

    async def consume(
        self,
        number: int,
        topic: Topic,
        events: Sequence[Envelope[Any]],
        handlers: Mapping[type[Payload], Handler[BookUnitOfWork]],
    ) -> Outcome:
        """Apply a batch of partition ``number``'s inputs of ``topic``, each once."""
        part = self._parts.get(number)
        if part is None or part.revoked:
            # Records of a partition this instance does not hold (around a rebalance): a
            # throwaway engine rebuilt from the database applies them, fenced like any other.
            part = self._new(number)
            if self._owned is None:
                self._parts[number] = part
            await part.recover()
            await self._catch_up(part)
        elif not part.reliability_current:  # rebuilt since from another instance's log
            await self._catch_up_reliability(part)
        try:
            return await part.consume(topic, events, handlers)
        except RevokedError:
            return await self.consume(number, topic, events, handlers)

    async def rates_changed(self) -> None:
        """A new FX rate: log it in every partition held (one failing does not stop others)."""
        for part in list(self._parts.values()):
            try:
                await self._catch_up_fx(part)
            except Exception as exc:  # the next tick tries again
                log.warning("fx not applied", extra={"p": part.number, "error": repr(exc)})

    def reliability_arrived(self) -> None:
        """Sellers' rates changed in the feed (or it caught up): wake ``next_reliability``."""
        self._reliability_arrived.set()

    async def next_reliability(self) -> None:
        """Wait until sellers' rates changed since the last wait, then log them in every
        partition held (what arrived meanwhile goes in the same command)."""
        await self._reliability_arrived.wait()
        self._reliability_arrived.clear()
        await self.reliability_changed()

    async def reliability_changed(self) -> None:
        """New sellers' rates: log them in every partition held (one failing does not stop
        the others; the next tick tries again)."""
        for part in list(self._parts.values()):
            try:
                await self._catch_up_reliability(part)
            except Exception as exc:
                log.warning("reliability not applied", extra={"p": part.number, "error": repr(exc)})

    async def _catch_up(self, part: Partition) -> None:
        """Sellers' rates, then FX rates, to the latest (an FX move may fill bids with a
        minimum reliability: it waits for the sellers' rates)."""
        await self._catch_up_reliability(part)
        await self._catch_up_fx(part)

    async def _catch_up_reliability(self, part: Partition) -> None:
        if self.reliability.caught_up:
            await part.set_reliability(self.reliability.rates(), self.reliability.totals())

    async def _catch_up_fx(self, part: Partition) -> None:
        if self.fx.caught_up:
            await part.set_rates(self.fx.rates())

    async def tick(self) -> None:
        """Per partition held: rates to the latest, then expire what is due now."""
        for part in list(self._parts.values()):
            try:
                await self._catch_up(part)
                await part.tick()
            except Exception as exc:  # a database error must not stop the other partitions
                log.warning("expiry failed; retrying", extra={"p": part.number, "error": repr(exc)})

    async def shutdown_snapshot(self) -> None:
        """Store a snapshot of each partition held, unless its newest one already is."""
        for part in list(self._parts.values()):
            await part.shutdown_snapshot()
