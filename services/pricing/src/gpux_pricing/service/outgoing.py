"""The events pricing sends: ids derived from their cause (handled twice, it sends nothing new)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.topics import Topic
from gpux_platform.broker import Outgoing

PRODUCER = "pricing"


def message(
    topic: Topic, key: str, payload: Payload, cause: Envelope[Any], *, tag: str, now: datetime
) -> Outgoing:
    """An event caused by ``cause``; ``tag`` tells apart the events one cause gives."""
    envelope = wrap(
        payload,
        producer=PRODUCER,
        occurred_at=now,
        event_id=stable_id(cause.event_id, tag),
        correlation_id=cause.correlation_id,
        causation_id=cause.event_id,
        trace=cause.trace,
    )
    return Outgoing(topic, key, envelope)
