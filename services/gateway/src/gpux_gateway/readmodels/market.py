"""The gateway's view of market sessions, rebuilt from the compacted ``market.sessions`` topic.

Like the catalog view (see ``catalog_consumer``): a subscriber without a consumer group reads
the topic from the earliest offset at every start, so every replica holds the whole state
(the latest record per scope). No record for a scope means open. A record it cannot read is
logged and skipped (the previous state of that scope stays); a tombstone removes its scope
(back to open). Ready once it has read up to the end offsets found at start-up.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from faststream import AckPolicy
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_common.contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_common.events import EventCodec
from gpux_common.settings import GpuxSettings
from gpux_common.topics import MARKET_SESSIONS

log = logging.getLogger("gpux.gateway.market")


class MarketView:
    """The latest market state per scope (``*`` or a GPU id), kept in memory."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self._codec: EventCodec[Any] = EventCodec(MarketStateChanged)
        self._states: dict[str, MarketStateChanged] = {}
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

    def state(self, scope: str) -> MarketState:
        """The state of one scope as published (open when nothing was)."""
        changed = self._states.get(scope)
        return MarketState.OPEN if changed is None else changed.state

    def all_state(self) -> MarketState:
        """The state of the whole market."""
        return self.state(ALL_GPUS)

    def gpu_states(self) -> dict[str, MarketState]:
        """Every GPU model with a published state of its own, by id."""
        return {s: c.state for s, c in sorted(self._states.items()) if s != ALL_GPUS}

    def apply(self, partition: int, offset: int, key: bytes | None, value: bytes | None) -> None:
        """Take one record into the view (never raises on bad data)."""
        self._positions[partition] = max(self._positions.get(partition, 0), offset + 1)
        if key is None:
            self._reject(offset, "a record without a key")
            return
        scope = key.decode(errors="replace")
        if value is None:
            self._states.pop(scope, None)
            return
        try:
            payload = self._codec.decode(value).payload
        except ValueError as exc:
            self._reject(offset, repr(exc))
            return
        if not isinstance(payload, MarketStateChanged) or payload.scope != scope:
            self._reject(offset, f"a record for another scope under key {scope!r}")
            return
        self._states[scope] = payload

    def _reject(self, offset: int, reason: str) -> None:
        self.rejected += 1
        log.warning("market record skipped", extra={"offset": offset, "why": reason})


def market_view(settings: GpuxSettings) -> MarketView:
    """An empty view of this namespace's market sessions topic."""
    return MarketView(settings.topic(MARKET_SESSIONS))


def market_router(view: MarketView) -> KafkaRouter:
    """The subscriber that applies every market sessions record to ``view``."""
    router = KafkaRouter()

    # No group, so nothing to commit (see catalog_consumer); apply never raises on bad data.
    @router.subscriber(
        view.topic,
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.MANUAL,
        title="gateway-market-view",
        description="Rebuilds the gateway's in-memory market sessions (no consumer group).",
    )
    async def on_market_record(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # not a batch subscriber
        view.apply(record.partition, record.offset, record.key, record.value)

    return router


async def load_end_offsets(settings: GpuxSettings, view: MarketView) -> None:
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
