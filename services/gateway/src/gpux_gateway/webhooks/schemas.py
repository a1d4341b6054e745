"""Request and response bodies of the webhook endpoints routes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from gpux_gateway.domain.webhooks import MAX_EVENT_TYPES, MAX_URL_LENGTH
from gpux_gateway.entrypoints.schemas import PRINTABLE, Strict, examples, examples_of, from_row
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryRow,
    DeliveryStatus,
    EndpointRow,
    EndpointStatus,
)

ENDPOINT = {
    "id": "01JWQY579G5VRMZR3ETG1K927V",
    "url": "https://example.com/gpux/webhook",
    "event_types": ["lease.ready", "lease.ended"],
    "description": "lease alerts for the ops channel",
    "status": "enabled",
    "disabled_reason": None,
    "failing_since": None,
    "created_at": "2025-06-02T09:50:02Z",
    "updated_at": "2025-06-02T09:50:02Z",
}
"""A webhook endpoint, as the examples show it."""

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

    model_config = examples(
        {
            "url": "https://example.com/gpux/webhook",
            "event_types": ["lease.ready", "lease.ended"],
            "description": "lease alerts for the ops channel",
        }
    )

    url: Url = Field(
        description="Where events are POSTed: https (http only in development), resolving to"
        " public addresses only.",
        examples=["https://example.com/gpux/webhook"],
    )
    event_types: EventTypes
    description: Description = ""


class WebhookEndpointChange(Strict):
    """Changes to an endpoint; `status: enabled` re-enables a disabled one."""

    model_config = examples({"status": "enabled"}, {"event_types": ["*"]})

    url: Url | None = None
    event_types: EventTypes | None = None
    description: Description | None = None
    status: EndpointStatus | None = None


class WebhookEndpointOut(BaseModel):
    """A webhook endpoint (its secret is shown only at creation and rotation)."""

    model_config = examples(ENDPOINT)

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

    model_config = examples(
        {**ENDPOINT, "secret": "whsec_VJewG9KC3VJjSOcJXKaBJ34pcV6H2IiHZ48dwMRNiBs"}
    )

    secret: str = Field(
        description="`whsec_…`: the key of the `Gpux-Signature` HMAC-SHA256; shown once."
    )


class WebhookAttemptOut(BaseModel):
    """One POST of a delivery."""

    model_config = examples(
        {
            "n": 1,
            "at": "2025-06-02T09:33:41Z",
            "status": 503,
            "error": None,
            "duration_ms": 212,
        },
        {
            "n": 2,
            "at": "2025-06-02T09:34:11Z",
            "status": 200,
            "error": None,
            "duration_ms": 48,
        },
    )

    n: int
    at: datetime
    status: int | None = Field(description="The receiver's HTTP status; null if none came.")
    error: str | None
    duration_ms: int


class WebhookDeliveryOut(BaseModel):
    """One event for one endpoint, and its attempts."""

    model_config = examples(
        {
            "id": "01JWQY6BDR37EKRWM9CA8NWE4K",
            "event_id": "01JWQY7FJ0ESS1V5BMENDQ7BCX",
            "event_type": "lease.ready",
            "status": "succeeded",
            "attempts": 2,
            "next_attempt_at": None,
            "last_attempt_at": "2025-06-02T09:34:11Z",
            "last_status": 200,
            "last_error": None,
            "created_at": "2025-06-02T09:33:41Z",
            "history": examples_of(WebhookAttemptOut),
        }
    )

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

    model_config = examples(
        {
            "event_id": "01JWQYFCFR80N5F3X1KMS0PD3G",
            "delivered": True,
            "status": 204,
            "error": None,
            "duration_ms": 63,
        }
    )

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
