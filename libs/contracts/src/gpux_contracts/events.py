"""Event envelope and payload base: typed, named ``noun.past_verb``, versioned.

Every message on Kafka is an ``Envelope`` around one payload. The payload model
carries its ``type`` and ``version`` as literals, so a union of payloads is a
discriminated union read by one TypeAdapter (see ``EventCodec``). Envelopes
also carry the W3C trace context they were created in, so a relay that
publishes later (outbox) continues the same trace.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from gpux_contracts.base import FrozenModel
from gpux_contracts.ids import new_id

TYPE_HEADER = "gpux-event-type"
VERSION_HEADER = "gpux-event-version"


class Payload(FrozenModel):
    """Base of every event payload: immutable, strict about unknown fields."""

    event_type: ClassVar[str]
    schema_version: ClassVar[int]


P = TypeVar("P", bound=BaseModel)


class TraceContext(FrozenModel):
    """W3C trace context (``traceparent`` and optional ``tracestate``)."""

    traceparent: str = Field(pattern=r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")
    tracestate: str | None = None

    def carrier(self) -> dict[str, str]:
        """As propagation headers."""
        headers = {"traceparent": self.traceparent}
        if self.tracestate:
            headers["tracestate"] = self.tracestate
        return headers

    @classmethod
    def from_carrier(cls, carrier: Mapping[str, str]) -> TraceContext | None:
        """From propagation headers, or None when there is no trace."""
        parent = carrier.get("traceparent")
        if not parent:
            return None
        return cls(traceparent=parent, tracestate=carrier.get("tracestate"))


class Envelope(FrozenModel, Generic[P]):
    """What travels on Kafka: metadata plus one typed payload."""

    event_id: str = Field(description="ULID: unique, sortable by creation time.")
    event_type: str = Field(description="Name of the payload, `noun.past_verb`.")
    schema_version: int = Field(ge=1, description="Version of the payload schema.")
    occurred_at: AwareDatetime = Field(description="When it happened, UTC.")
    producer: str = Field(description="The service that created the event.")
    correlation_id: str | None = Field(
        default=None, description="Id shared by every event of one user action."
    )
    causation_id: str | None = Field(
        default=None, description="Id of the event or command that caused this one."
    )
    trace: TraceContext | None = Field(default=None, description="W3C trace context at creation.")
    payload: P

    @field_validator("occurred_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)

    def headers(self) -> dict[str, str]:
        """Kafka headers that let consumers route without parsing the body."""
        return {TYPE_HEADER: self.event_type, VERSION_HEADER: str(self.schema_version)}


@functools.cache
def _envelope_type(payload_type: type[Payload]) -> Any:
    # Looked up once per payload type: pydantic's generic lookup costs more than the envelope.
    return Envelope[payload_type]  # type: ignore[valid-type]


def wrap(
    payload: P,
    *,
    producer: str,
    occurred_at: datetime,
    event_id: str | None = None,
    correlation_id: str | None = None,
    causation_id: str | None = None,
    trace: TraceContext | None = None,
) -> Envelope[P]:
    """Put a payload into an envelope; the type and version come from the payload class."""
    result: Envelope[P] = _envelope_type(type(payload))(
        event_id=event_id or new_id(),
        event_type=payload.event_type,  # type: ignore[attr-defined]
        schema_version=payload.schema_version,  # type: ignore[attr-defined]
        occurred_at=occurred_at,
        producer=producer,
        correlation_id=correlation_id,
        causation_id=causation_id,
        trace=trace,
        payload=payload,
    )
    return result


class EventCodec(Generic[P]):
    """Reads envelopes of a known set of payload types from JSON bytes."""

    def __init__(self, *payload_types: type[Payload]) -> None:
        self._types: dict[tuple[str, int], type[Payload]] = {
            (t.event_type, t.schema_version): t for t in payload_types
        }

    @property
    def payload_types(self) -> tuple[type[Payload], ...]:
        """The payload types this codec reads."""
        return tuple(self._types.values())

    def decode(self, data: bytes | str) -> Envelope[Any]:
        """Parse bytes into an envelope whose payload is the registered model.

        The type and version are read first (a cheap parse that validates nothing else), then
        the whole record in one pass by the cached envelope class of that payload type: a
        consumer decodes every record, and building ``Envelope[model]`` per record costs
        more than the parse.
        """
        head = _Head.model_validate_json(data)
        model = self._types.get((head.event_type, head.schema_version))
        if model is None:
            raise UnknownEventError(head.event_type, head.schema_version)
        envelope: Envelope[Any] = _envelope_type(model).model_validate_json(data)
        return envelope


class _Head(BaseModel):
    """What routes a record: its payload's type and version (the rest is read afterwards)."""

    model_config = ConfigDict(extra="ignore")

    event_type: str
    schema_version: int


class UnknownEventError(ValueError):
    """An envelope whose type or version this reader does not know."""

    def __init__(self, event_type: str, version: int) -> None:
        super().__init__(f"unknown event {event_type} v{version}")
        self.event_type = event_type
        self.version = version


def decode_or_none(
    codec: EventCodec[Any], data: bytes, log: logging.Logger
) -> Envelope[Any] | None:
    """Decode a record, or log and return None for one that can never be handled.

    A record of an unknown type (say, a newer version) or one that does not validate would
    fail again on every redelivery; it is logged and skipped rather than retried forever.
    """
    try:
        return codec.decode(data)
    except UnknownEventError as exc:
        log.info("skipped an event of an unknown type", extra={"event": str(exc)})
    except ValidationError as exc:
        log.error("skipped an invalid record", extra={"error": str(exc)[:500]})
    return None
