"""The gateway's view of the order books, rebuilt from the compacted ``market.book`` topic.

Like the market sessions view (see ``market``): a subscriber without a consumer group reads
the topic from the earliest offset at every start, so every replica holds the latest levels
of every book (a few records per GPU model). Per key (``gpu|tier``) it keeps the record with
the highest ``sequence``: an older state that arrives later (a republished outbox row) is
dropped. A record it cannot read is logged and skipped; a tombstone removes its book. Ready
once it has read up to the end offsets found at start-up.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from faststream import AckPolicy
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_common.contracts.book import BookLevelsChanged, book_key
from gpux_common.events import EventCodec
from gpux_common.settings import GpuxSettings
from gpux_common.topics import MARKET_BOOK

log = logging.getLogger("gpux.gateway.orderbook")


class BookView:
    """The latest levels per book (``gpu|tier``), kept in memory."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self._codec: EventCodec[Any] = EventCodec(BookLevelsChanged)
        self._books: dict[str, BookLevelsChanged] = {}
        self._positions: dict[int, int] = {}
        self._ends: dict[int, int] | None = None
        self.rejected = 0
        """Records skipped because they could not be read (see the log)."""

    @property
    def ready(self) -> bool:
        """True once every partition was read up to its end offset at start-up."""
        if self._ends is None:
            return False
        return all(self._positions.get(p, 0) >= end for p, end in self._ends.items())

    def set_end_offsets(self, ends: Mapping[int, int]) -> None:
        """Record where each partition ended when the gateway started."""
        self._ends = dict(ends)

    def book(self, gpu: str, tier: str) -> BookLevelsChanged | None:
        """The latest levels of one book, or None if matching never published it."""
        return self._books.get(book_key(gpu, tier))

    def apply(self, partition: int, offset: int, key: bytes | None, value: bytes | None) -> None:
        """Take one record into the view (never raises on bad data)."""
        self._positions[partition] = max(self._positions.get(partition, 0), offset + 1)
        if key is None:
            self._reject(offset, "a record without a key")
            return
        name = key.decode(errors="replace")
        if value is None:
            self._books.pop(name, None)
            return
        try:
            payload = self._codec.decode(value).payload
        except ValueError as exc:
            self._reject(offset, repr(exc))
            return
        if (
            not isinstance(payload, BookLevelsChanged)
            or book_key(payload.gpu, payload.tier) != name
        ):
            self._reject(offset, f"a record for another book under key {name!r}")
            return
        held = self._books.get(name)
        if held is None or held.sequence <= payload.sequence:
            self._books[name] = payload

    def _reject(self, offset: int, reason: str) -> None:
        self.rejected += 1
        log.warning("book record skipped", extra={"offset": offset, "why": reason})


def book_view(settings: GpuxSettings) -> BookView:
    """An empty view of this namespace's ``market.book`` topic."""
    return BookView(settings.topic(MARKET_BOOK))


def book_router(view: BookView) -> KafkaRouter:
    """The subscriber that applies every ``market.book`` record to ``view``."""
    router = KafkaRouter()

    # No group, so nothing to commit (see catalog_consumer); apply never raises on bad data.
    @router.subscriber(
        view.topic,
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.MANUAL,
        title="gateway-orderbook-view",
        description="Rebuilds the gateway's in-memory order book levels (no consumer group).",
    )
    async def on_book_record(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # not a batch subscriber
        view.apply(record.partition, record.offset, record.key, record.value)

    return router


async def load_book_end_offsets(settings: GpuxSettings, view: BookView) -> None:
    """Tell the view where each partition ends now, so it knows when it caught up."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        request_timeout_ms=int(settings.connect_timeout_s * 1000) + 10_000,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        await consumer.topics()  # fetches the metadata partitions_for_topic reads
        partitions = [
            TopicPartition(view.topic, p)
            for p in sorted(consumer.partitions_for_topic(view.topic) or ())
        ]
        ends = await consumer.end_offsets(partitions) if partitions else {}
    finally:
        await consumer.stop()
    view.set_end_offsets({tp.partition: end for tp, end in ends.items()})
