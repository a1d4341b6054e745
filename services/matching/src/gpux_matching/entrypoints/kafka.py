"""Matching's subscribers: thin adapters from Kafka records to the handlers of ``service``.

``pricing.offers``, ``orders.book`` and ``capacity.commands`` are read by ONE batch subscriber
(one consumer in the group ``matching.book``) with Kafka's range assignor: the three topics are
keyed by GPU id with the same partition count, and the range assignor gives each member the
same partition numbers of each, so an instance owns partition p of all three, i.e. every
offer, order and lease's end of p's GPUs.
The rebalance listener tells the partitions which ones this instance owns (``Ownership``). A
batch (up to ``MAX_RECORDS`` records: what the consumer has when it wakes) is split by partition;
each partition applies its records under its lock through units of work
(``gpux_platform.batches.BatchHandler``: one unit for the lot unless one fails, which is split
down to the bad record); the offsets are committed once, after every unit committed.
``fx.rates`` and ``billing.reliability`` are read whole by every instance, without a group
(``FxFeed``, ``ReliabilityFeed``); ``market.sessions`` keeps a group of its own (its state
goes to the database, shared by every instance).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, NamedTuple, TypeVar

from aiokafka import ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from faststream import StreamMessage
from faststream.kafka import KafkaRouter

from gpux_contracts.events import Envelope, EventCodec, Payload, decode_or_none
from gpux_contracts.fx import RatePublished
from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.topics import BILLING_RELIABILITY, FX_RATES, MARKET_SESSIONS, Topic
from gpux_matching.service import BOOK_HANDLERS, SESSION_HANDLERS
from gpux_matching.service.partitions import Partitions
from gpux_matching.service.unit_of_work import BookUnitOfWork, MatchingUnitOfWork
from gpux_platform.batches import (
    MAX_RECORDS,
    RETRY_LATER_WAIT_S,
    BatchHandler,
    Handler,
    RetryLater,
    subscribe_batches,
)
from gpux_platform.broker import batch_subscriber, observe_batch_lag, subscriber_options
from gpux_platform.compacted import end_offsets, subscribe_whole
from gpux_platform.metrics import BATCH_RECORDS, HANDLER_SECONDS, RECORDS
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.matching")
BOOK_GROUP = "matching.book"
BookHandlers = Mapping[type[Payload], Handler[BookUnitOfWork]]
Input = tuple[Topic, EventCodec[Any], BookHandlers]
"""A book input's topic, its codec and its handlers."""
SESSIONS_GROUP = "matching.market.sessions"
P = TypeVar("P", bound=Payload)


class Ownership(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka is untyped
    """Tells the partitions which ones Kafka assigned to this instance and which it took."""

    def __init__(self, partitions: Partitions) -> None:
        self.partitions = partitions

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.partitions.revoke({tp.partition for tp in revoked})

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self.partitions.assign({tp.partition for tp in assigned})


def matching_router(
    settings: GpuxSettings,
    partitions: Partitions,
    sessions_unit: Callable[[], AbstractAsyncContextManager[MatchingUnitOfWork]],
) -> KafkaRouter:
    """Every subscriber of the matching service."""
    router = KafkaRouter()
    subscribe_book(router, settings, partitions)
    subscribe_fx(router, settings, partitions)
    subscribe_reliability(router, settings, partitions)
    subscribe_batches(
        router,
        settings,
        group=SESSIONS_GROUP,
        batch=BatchHandler(MARKET_SESSIONS, SESSION_HANDLERS, sessions_unit),
    )
    return router


@dataclass(frozen=True, slots=True)
class Feed(Generic[P]):
    """A topic every instance reads whole, and how its subscriber is documented."""

    topic: Topic
    payload: type[P]
    title: str
    description: str


FX_FEED = Feed(
    FX_RATES,
    RatePublished,
    "matching-fx-feed",
    "Every instance reads all FX rates; each owned partition logs them.",
)
RELIABILITY_FEED = Feed(
    BILLING_RELIABILITY,
    ReliabilityChanged,
    "matching-reliability-feed",
    "Every instance reads all sellers' reliability; owned partitions log it.",
)


class Run(NamedTuple):
    """The records of one topic-partition in a batch, decoded, in offset order."""

    partition: int
    topic: Topic
    handlers: BookHandlers
    events: list[Envelope[Any]]


def book_runs(
    records: Sequence[ConsumerRecord], inputs: Mapping[str, Input]
) -> tuple[list[Run], Counter[str]]:
    """A batch's records by partition (in the order partitions first appear) and, within a
    partition, by topic, each in offset order; and how many could not be read, per topic."""
    runs: dict[int, dict[str, list[ConsumerRecord]]] = {}
    for record in records:
        runs.setdefault(record.partition, {}).setdefault(record.topic, []).append(record)
    out: list[Run] = []
    skipped: Counter[str] = Counter()
    for partition, by_topic in runs.items():
        for name, chunk in by_topic.items():
            topic, codec, handlers = inputs[name]
            events = []
            for record in sorted(chunk, key=attrgetter("offset")):
                envelope = decode_or_none(codec, record.value or b"", log)
                if envelope is None:
                    skipped[topic.name] += 1
                else:
                    events.append(envelope)
            if events:
                out.append(Run(partition, topic, handlers, events))
    return out, skipped


async def apply_book_batch(
    partitions: Partitions, inputs: Mapping[str, Input], records: Sequence[ConsumerRecord]
) -> None:
    """Apply a batch, partition by partition (each under its lock, through units of work).

    Records of a topic-partition that must wait (``RetryLater``: no FX rate yet, or another
    instance keeps logging to the partition) do not hold the others up: the batch is given
    back once the others are applied, and those are recognised in the inbox when it comes
    again.
    """
    runs, skipped = book_runs(records, inputs)
    for name, count in skipped.items():
        RECORDS.labels(name, "skipped").inc(count)
    later: RetryLater | None = None
    for run in runs:
        name = run.topic.name
        BATCH_RECORDS.labels(name).observe(len(run.events))
        try:
            outcome = await partitions.consume(run.partition, run.topic, run.events, run.handlers)
        except RetryLater as exc:
            RECORDS.labels(name, "retry_later").inc(len(run.events))
            later = later or exc
            continue
        except BaseException:
            RECORDS.labels(name, "failed").inc(len(run.events))
            raise
        for label, count in (
            ("applied", outcome.applied),
            ("duplicate", outcome.duplicate),
            ("set_aside", outcome.set_aside),
            ("unhandled", outcome.unhandled),
        ):
            if count:
                RECORDS.labels(name, label).inc(count)
    if later is not None:
        await asyncio.sleep(RETRY_LATER_WAIT_S)  # then the batch comes again
        raise later


def subscribe_book(router: KafkaRouter, settings: GpuxSettings, partitions: Partitions) -> None:
    """The one batch subscriber of the book's co-partitioned inputs (see the module doc):
    faststream commits the batch's offsets once ``apply_book_batch`` returned."""
    inputs: dict[str, Input] = {
        settings.topic(topic): (topic, EventCodec(*handlers), handlers)
        for topic, handlers in BOOK_HANDLERS.items()
    }

    # The platform's batch subscriber: it wakes when records arrive (faststream's own sleeps
    # its batch timeout again after an empty poll) and hands the message over directly.
    @batch_subscriber(
        router,
        *inputs,
        max_records=MAX_RECORDS,
        **subscriber_options(settings, BOOK_GROUP),
        partition_assignment_strategy=(RangePartitionAssignor,),
        listener=Ownership(partitions),
    )
    async def consume(message: StreamMessage[Any]) -> None:
        raw = message.raw_message
        records = raw if isinstance(raw, tuple) else (raw,)
        started = time.perf_counter()
        try:
            await apply_book_batch(partitions, inputs, records)
        finally:
            HANDLER_SECONDS.labels(BOOK_GROUP, "batch").observe(time.perf_counter() - started)
        observe_batch_lag(message)


def subscribe_fx(router: KafkaRouter, settings: GpuxSettings, partitions: Partitions) -> None:
    """Every instance reads all FX rates; each partition held logs the ones that change it."""

    async def on_rate(rate: RatePublished | None, record: ConsumerRecord) -> None:
        if partitions.fx.apply(rate, record.offset):
            await partitions.rates_changed()

    subscribe_feed(router, settings, FX_FEED, on_rate)


async def load_fx_end(settings: GpuxSettings, partitions: Partitions) -> None:
    """Tell the FX feed where ``fx.rates`` ends now, so it knows when its rates are current."""
    partitions.fx.set_end((await feed_ends(settings, FX_FEED)).get(0, 0))


def subscribe_reliability(
    router: KafkaRouter, settings: GpuxSettings, partitions: Partitions
) -> None:
    """Every instance reads all sellers' reliability counts; a change wakes the loop that logs
    the new rates in each partition held (``loops.run_reliability``), so the records of one
    fetch cost one command per partition, not one each."""

    async def on_counts(counts: ReliabilityChanged | None, record: ConsumerRecord) -> None:
        if partitions.reliability.apply(counts, record.partition, record.offset):
            partitions.reliability_arrived()

    subscribe_feed(router, settings, RELIABILITY_FEED, on_counts)


async def load_reliability_end(settings: GpuxSettings, partitions: Partitions) -> None:
    """Tell the reliability feed where each partition of ``billing.reliability`` ends now."""
    partitions.reliability.set_ends(await feed_ends(settings, RELIABILITY_FEED))


def subscribe_feed(
    router: KafkaRouter,
    settings: GpuxSettings,
    feed: Feed[P],
    on_payload: Callable[[P | None, ConsumerRecord], Awaitable[None]],
) -> None:
    """A feed every instance reads whole (no group, from the earliest offset): each record's
    payload (None when it cannot be read) goes to ``on_payload``."""
    codec: EventCodec[P] = EventCodec(feed.payload)

    async def on_record(record: ConsumerRecord) -> None:
        envelope = decode_or_none(codec, record.value or b"", log)
        await on_payload(None if envelope is None else envelope.payload, record)

    subscribe_whole(
        router,
        [settings.topic(feed.topic)],
        title=feed.title,
        description=feed.description,
        handle=on_record,
    )


async def feed_ends(settings: GpuxSettings, feed: Feed[Any]) -> dict[int, int]:
    """Where each partition of a feed's topic ends now, by partition number."""
    name = settings.topic(feed.topic)
    ends = await end_offsets(settings, [name])
    return {partition: end for (of, partition), end in ends.items() if of == name}
