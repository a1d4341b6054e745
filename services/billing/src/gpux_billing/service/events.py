"""How billing addresses its events: producer, stable ids, and the trace of their cause."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.topics import Topic
from gpux_platform.broker import Outgoing

PRODUCER = "billing"


def outgoing(
    topic: Topic,
    key: str,
    payload: Payload,
    *,
    cause: Envelope[Any] | None,
    event_id: str,
    now: datetime,
) -> Outgoing:
    """An event for the outbox, in the trace of its cause (None: billing's own timer)."""
    envelope = wrap(
        payload,
        producer=PRODUCER,
        occurred_at=now,
        event_id=event_id,
        correlation_id=None if cause is None else cause.correlation_id,
        causation_id=None if cause is None else cause.event_id,
        trace=None if cause is None else cause.trace,
    )
    return Outgoing(topic, key, envelope)
