"""The commands the gateway sends: their ids, their envelopes, and their way into the outbox."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id, stable_id
from gpux_contracts.topics import Topic
from gpux_platform.broker import Outgoing
from gpux_platform.telemetry import current_trace

if TYPE_CHECKING:
    from gpux_gateway.service.unit_of_work import GatewayUnitOfWork

PRODUCER = "gateway"


def command_id(scope: str, key: str | None, purpose: str) -> str:
    """A stable id for what a request creates: derived from its Idempotency-Key when it has one."""
    return stable_id(scope, key, purpose) if key else new_id()


def envelope(payload: Payload, event_id: str, now: datetime) -> Envelope[Any]:
    """A command envelope from the gateway, in the current trace."""
    return wrap(
        payload,
        producer=PRODUCER,
        occurred_at=now,
        event_id=event_id,
        correlation_id=event_id,
        trace=current_trace(),
    )


def send(uow: GatewayUnitOfWork, topic: Topic, key: str, payload: Payload, event_id: str) -> None:
    """Queue ``payload`` on ``topic`` (partition ``key``) in the unit's outbox: it is published
    once the unit commits, stamped with the unit's instant."""
    uow.outbox.add(Outgoing(topic, key, envelope(payload, event_id, uow.now)))
