"""Matching's subscribers: thin adapters from Kafka records to the handlers of ``service``.

``pricing.offers`` and ``orders.book`` are read by ONE subscriber (one consumer in the
group ``matching.book``) with Kafka's range assignor: both topics are keyed by GPU id with the
same partition count, and the range assignor gives each member the same partition numbers of
both, so an instance owns partition p of both topics, i.e. every offer and order of p's GPUs.
The rebalance listener tells the partitions which ones this instance owns (``Ownership``).
Each record is applied under its partition's lock through a unit of work of its own.
``fx.rates`` is read whole by every instance, without a group (``FxFeed``);
``market.sessions`` keeps a group of its own (its state goes to the database, shared by every
instance).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from aiokafka import ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_contracts.events import EventCodec, Payload, decode_or_none
from gpux_contracts.fx import RatePublished
from gpux_contracts.topics import FX_RATES, MARKET_SESSIONS, Topic
from gpux_matching.service import BOOK_HANDLERS, SESSION_HANDLERS
from gpux_matching.service.partitions import Partitions
from gpux_matching.service.unit_of_work import BookUnitOfWork, MatchingUnitOfWork
from gpux_platform.batches import (
    RETRY_LATER_WAIT_S,
    BatchHandler,
    Handler,
    RetryLater,
    subscribe_batches,
)
from gpux_platform.broker import subscriber_options
from gpux_platform.compacted import end_offsets, subscribe_whole
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.matching")
BOOK_GROUP = "matching.book"
BookHandlers = Mapping[type[Payload], Handler[BookUnitOfWork]]
Input = tuple[Topic, EventCodec[Any], BookHandlers]
"""A book input's topic, its codec and its handlers."""
SESSIONS_GROUP = "matching.market.sessions"


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
    subscribe_batches(
        router,
        settings,
        group=SESSIONS_GROUP,
        batch=BatchHandler(MARKET_SESSIONS, SESSION_HANDLERS, sessions_unit),
    )
    return router


def subscribe_book(router: KafkaRouter, settings: GpuxSettings, partitions: Partitions) -> None:
    """The one subscriber of the book's co-partitioned inputs (see the module doc)."""
    inputs: dict[str, Input] = {
        settings.topic(topic): (topic, EventCodec(*handlers), handlers)
        for topic, handlers in BOOK_HANDLERS.items()
    }

    @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        *inputs,
        **subscriber_options(settings, BOOK_GROUP),
        partition_assignment_strategy=(RangePartitionAssignor,),
        listener=Ownership(partitions),
    )
    async def consume(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # not a batch subscriber
        topic, codec, handlers = inputs[record.topic]
        envelope = decode_or_none(codec, message.body, log)
        if envelope is None:
            return
        try:
            await partitions.consume(record.partition, topic, [envelope], handlers)
        except RetryLater:
            await asyncio.sleep(RETRY_LATER_WAIT_S)  # then the record comes again
            raise


def subscribe_fx(router: KafkaRouter, settings: GpuxSettings, partitions: Partitions) -> None:
    """Every instance reads all FX rates; each partition held logs the ones that change it."""
    codec: EventCodec[Any] = EventCodec(RatePublished)

    async def on_rate(record: ConsumerRecord) -> None:
        envelope = decode_or_none(codec, record.value or b"", log)
        if partitions.fx.apply(None if envelope is None else envelope.payload, record.offset):
            await partitions.rates_changed()

    subscribe_whole(
        router,
        [settings.topic(FX_RATES)],
        title="matching-fx-feed",
        description="Every instance reads all FX rates; each owned partition logs them.",
        handle=on_rate,
    )


async def load_fx_end(settings: GpuxSettings, partitions: Partitions) -> None:
    """Tell the FX feed where ``fx.rates`` ends now, so it knows when its rates are current."""
    topic = settings.topic(FX_RATES)
    ends = await end_offsets(settings, [topic])
    partitions.fx.set_end(ends.get((topic, 0), 0))
