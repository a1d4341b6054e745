"""Request and response bodies of the webhook endpoints routes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from gpux_gateway.domain.webhooks import MAX_EVENT_TYPES, MAX_URL_LENGTH
from gpux_gateway.entrypoints.schemas import PRINTABLE, Strict, from_row
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryRow,
    DeliveryStatus,
    EndpointRow,
    EndpointStatus,
)

Url = Annotated[str, StringConstraints(min_length=1, max_length=MAX_URL_LENGTH)]
Description = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=500, pattern=r"^[^\x00]*$")
]
EventType = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=PRINTABLE)]
EventTypes = Annotated[
    list[EventType],
    Field(
        min_length=1,
        max_length=MAX_EVENT_TYPES,
        description="Event types to send (`*`: every type); see the account event types.",
        examples=[["lease.ready", "lease.ended"]],
    ),
]


class NewWebhookEndpoint(Strict):
    """An endpoint to send the account's events to."""

    url: Url = Field(
        description="Where events are POSTed: https (http only in development), resolving to"
        " public addresses only.",
        examples=["https://example.com/gpux/webhook"],
    )
    event_types: EventTypes
    description: Description = ""


class WebhookEndpointChange(Strict):
    """Changes to an endpoint; `status: enabled` re-enables a disabled one."""

    url: Url | None = None
    event_types: EventTypes | None = None
    description: Description | None = None
    status: EndpointStatus | None = None


class WebhookEndpointOut(BaseModel):
    """A webhook endpoint (its secret is shown only at creation and rotation)."""

    id: str
    url: str
    event_types: list[str]
    description: str
    status: EndpointStatus
    disabled_reason: str | None
    failing_since: datetime | None = Field(
        description="The first failure since the last successful delivery, if failing."
    )
    created_at: datetime
    updated_at: datetime


class WebhookEndpointWithSecret(WebhookEndpointOut):
    """A webhook endpoint with its signing secret: keep it, it is not shown again."""

    secret: str = Field(
        description="`whsec_…`: the key of the `Gpux-Signature` HMAC-SHA256; shown once."
    )


class WebhookAttemptOut(BaseModel):
    """One POST of a delivery."""

    n: int
    at: datetime
    status: int | None = Field(description="The receiver's HTTP status; null if none came.")
    error: str | None
    duration_ms: int


class WebhookDeliveryOut(BaseModel):
    """One event for one endpoint, and its attempts."""

    id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None
    last_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    created_at: datetime
    history: list[WebhookAttemptOut] = Field(description="Every attempt, oldest first.")


class WebhookPingOut(BaseModel):
    """What a test ping got from the endpoint (sent at once, not queued, not retried)."""

    event_id: str
    delivered: bool = Field(description="The endpoint answered 2xx within the timeout.")
    status: int | None
    error: str | None
    duration_ms: int


def endpoint_out(row: EndpointRow) -> WebhookEndpointOut:
    """The public view of an endpoint."""
    return from_row(WebhookEndpointOut, row, event_types=list(row.event_types))


def endpoint_with_secret(row: EndpointRow) -> WebhookEndpointWithSecret:
    """The endpoint with its secret (creation, rotation)."""
    return from_row(WebhookEndpointWithSecret, row, event_types=list(row.event_types))


def _attempt_out(row: AttemptRow) -> WebhookAttemptOut:
    return from_row(WebhookAttemptOut, row)


def delivery_out(row: DeliveryRow) -> WebhookDeliveryOut:
    """The public view of a delivery."""
    return from_row(WebhookDeliveryOut, row, history=[_attempt_out(a) for a in row.history])
