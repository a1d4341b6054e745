"""The one way gpux consumes a topic: decode, then apply once, in one transaction.

Every subscriber made here has its group and at-least-once acknowledgement
(``subscriber_options``); each record is decoded with the reader's codec (records it
can never handle are logged and skipped, not retried forever), and its effect runs in
one PostgreSQL transaction with the inbox claim (``consume_once``), so a redelivered
record changes nothing. ``after`` runs once the transaction committed, for read models
that must follow the database (Redis), never lead it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
from faststream.kafka import KafkaRouter
from faststream.kafka.annotations import KafkaMessage

from gpux_contracts.events import Envelope, EventCodec, decode_or_none
from gpux_contracts.topics import Topic
from gpux_platform.broker import subscriber_options
from gpux_platform.metrics import HANDLER_SECONDS, RECORDS
from gpux_platform.outbox import consume_once
from gpux_platform.settings import GpuxSettings

T = TypeVar("T")
log = logging.getLogger("gpux.consumers")


def subscribe_once(
    router: KafkaRouter,
    settings: GpuxSettings,
    *,
    topic: Topic,
    group: str,
    codec: EventCodec[Any],
    pool: asyncpg.Pool,
    schema: str,
    handle: Callable[[asyncpg.Connection, Envelope[Any]], Awaitable[T]],
    after: Callable[[T], Awaitable[None]] | None = None,
) -> None:
    """Add a subscriber to ``router`` that applies each record of ``topic`` exactly once."""

    @router.subscriber(  # type: ignore[untyped-decorator]  # kwargs come from a dict
        settings.topic(topic), **subscriber_options(settings, group)
    )
    async def consume(message: KafkaMessage) -> None:
        started = time.perf_counter()
        outcome = "failed"
        try:
            outcome = await _consume(message)
        finally:
            RECORDS.labels(topic.name, outcome).inc()
            HANDLER_SECONDS.labels(topic.name, outcome).observe(time.perf_counter() - started)

    async def _consume(message: KafkaMessage) -> str:
        envelope = decode_or_none(codec, message.body, log)
        if envelope is None:
            return "skipped"
        results: list[T] = []

        async def apply(conn: asyncpg.Connection) -> None:
            results.append(await handle(conn, envelope))

        applied = await consume_once(pool, schema, topic.name, envelope.event_id, apply)
        if not applied:
            return "duplicate"
        if after is not None:
            await after(results[0])
        return "applied"
