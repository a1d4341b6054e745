"""What the gateway's server-sent event streams share: the ``Last-Event-ID`` a reconnecting
client resumes from, and a response that keeps an idle connection open with a comment line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Header
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

LastEventId = Annotated[str | None, Header(alias="Last-Event-ID", max_length=45)]
"""The ``id`` of the last event a reconnecting client saw (``EventSource`` sends it)."""


def _heartbeat() -> ServerSentEvent:
    return ServerSentEvent(comment="ping")


def event_stream(events: AsyncIterator[dict[str, Any]], ping_s: int) -> EventSourceResponse:
    """``events`` as a stream, with a comment line (``: ping``) every ``ping_s`` seconds."""
    return EventSourceResponse(events, ping=ping_s, ping_message_factory=_heartbeat)
