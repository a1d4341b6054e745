"""Matching's subscribers: thin adapters from Kafka records to the book, once per event.

``pricing.offers`` and ``orders.book`` are read by ONE subscriber (one consumer in the group
``matching.book``) with Kafka's range assignor: both topics are keyed by GPU id with the same
partition count, and the range assignor gives each member the same partition numbers of both,
so an instance owns partition p of both topics, i.e. every offer and order of p's GPUs. The
rebalance listener tells the book which partitions it owns (``Ownership``). ``fx.rates`` is
read whole by every instance, without a group (``FxFeed``); ``market.sessions`` keeps a group
of its own (its state goes to the database, shared by every instance).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from aiokafka import ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_contracts.events import Envelope, EventCodec, decode_or_none
from gpux_contracts.fx import RatePublished
from gpux_contracts.market import MarketStateChanged
from gpux_contracts.offers import OfferAccepted, OfferWithdrawn
from gpux_contracts.orders import OrderCancelRequested, OrderFunded
from gpux_contracts.topics import FX_RATES, MARKET_SESSIONS, ORDERS_BOOK, PRICING_OFFERS, Topic
from gpux_matching import handlers
from gpux_matching.book import Book
from gpux_matching.domain import Command
from gpux_platform.broker import subscriber_options
from gpux_platform.compacted import end_offsets, subscribe_whole
from gpux_platform.consumers import subscribe_once
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.matching")
Planner = Callable[[asyncpg.Connection, handlers.Holder, Envelope[Any]], Awaitable[Command | None]]
BOOK_GROUP = "matching.book"


class Ownership(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka is untyped
    """Tells the book which partitions Kafka assigned to this instance and which it took."""

    def __init__(self, book: Book) -> None:
        self.book = book

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.book.revoke({tp.partition for tp in revoked})

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self.book.assign({tp.partition for tp in assigned})


def matching_router(settings: GpuxSettings, book: Book) -> KafkaRouter:
    """Every subscriber of the matching service."""
    router = KafkaRouter()
    inputs: dict[str, tuple[Topic, EventCodec[Any], dict[str, Planner]]] = {
        settings.topic(PRICING_OFFERS): (
            PRICING_OFFERS,
            EventCodec(OfferAccepted, OfferWithdrawn),
            {"offer.accepted": handlers.plan_accepted, "offer.withdrawn": handlers.plan_withdrawn},
        ),
        settings.topic(ORDERS_BOOK): (
            ORDERS_BOOK,
            EventCodec(OrderFunded, OrderCancelRequested),
            {"order.funded": handlers.plan_funded, "order.cancel_requested": handlers.plan_cancel},
        ),
    }

    @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        *inputs,
        **subscriber_options(settings, BOOK_GROUP),
        partition_assignment_strategy=(RangePartitionAssignor,),
        listener=Ownership(book),
    )
    async def consume(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # not a batch subscriber
        topic, codec, route = inputs[record.topic]
        envelope = decode_or_none(codec, message.body, log)
        if envelope is None:
            return
        planner = route.get(envelope.event_type)
        if planner is None:
            return

        async def plan(conn: asyncpg.Connection, part: handlers.Holder) -> Command | None:
            return await planner(conn, part, envelope)

        await book.consume(record.partition, topic.name, envelope, plan)

    fx_codec: EventCodec[Any] = EventCodec(RatePublished)

    async def on_rate(record: ConsumerRecord) -> None:
        envelope = decode_or_none(fx_codec, record.value or b"", log)
        if book.fx.apply(None if envelope is None else envelope.payload, record.offset):
            await book.rates_changed()

    subscribe_whole(
        router,
        [settings.topic(FX_RATES)],
        title="matching-fx-feed",
        description="Every instance reads all FX rates; each owned partition logs them.",
        handle=on_rate,
    )

    # Not a book command: the state goes to matching.market_state, read by plan_funded.
    subscribe_once(
        router,
        settings,
        topic=MARKET_SESSIONS,
        group="matching.market.sessions",
        codec=EventCodec(MarketStateChanged),
        pool=book.pool,
        schema=handlers.SCHEMA,
        handle=handlers.record_market_state,
    )
    return router


async def load_fx_end(settings: GpuxSettings, book: Book) -> None:
    """Tell the FX feed where ``fx.rates`` ends now, so it knows when its rates are current."""
    topic = settings.topic(FX_RATES)
    ends = await end_offsets(settings, [topic])
    book.fx.set_end(ends.get((topic, 0), 0))
