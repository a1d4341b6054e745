"""What the webhooks resource stores (endpoints, deliveries, attempts), and its repository."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol


class EndpointStatus(StrEnum):
    """Whether an endpoint is sent its events."""

    ENABLED = "enabled"
    DISABLED = "disabled"


class DeliveryStatus(StrEnum):
    """Where a delivery is: due (now or later), delivered, or given up."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class EndpointRow:
    """A webhook endpoint of an account."""

    id: str
    account_id: str
    url: str
    event_types: tuple[str, ...]
    description: str
    secret: str
    status: EndpointStatus
    disabled_reason: str | None
    failing_since: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One POST of a delivery: the receiver's status, or why there was none."""

    delivery_id: str
    n: int
    at: datetime
    status: int | None
    error: str | None
    duration_ms: int


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """One event for one endpoint, with its attempts (oldest first)."""

    id: str
    endpoint_id: str
    account_id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts: int
    run_failures: int
    """Failures since the delivery was (re)queued: the exponent of its backoff."""
    first_attempt_at: datetime | None
    """The first attempt since it was (re)queued: its retries stop ``retry_for`` after."""
    next_attempt_at: datetime | None
    last_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    created_at: datetime
    history: tuple[AttemptRow, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """An account event as webhooks send it."""

    id: str
    type: str
    created_at: datetime
    account_id: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DueDelivery:
    """A delivery taken for an attempt, with its endpoint's URL and secret and its event."""

    delivery: DeliveryRow
    url: str
    secret: str
    event: WebhookEvent


class WebhooksRepository(Protocol):
    """The webhook_endpoints, webhook_deliveries and webhook_attempts tables; the resource's
    reads and writes name the account, the dispatcher's do not."""

    async def add_endpoint(self, endpoint: EndpointRow) -> None:
        """Store a new endpoint."""
        ...

    async def endpoints_page(
        self, account_id: str, after: str | None, limit: int
    ) -> list[EndpointRow]:
        """Up to ``limit`` of the account's endpoints in id order, after the cursor id."""
        ...

    async def endpoint(self, account_id: str, endpoint_id: str) -> EndpointRow | None:
        """One of the account's endpoints, or None."""
        ...

    async def update_endpoint(self, endpoint: EndpointRow) -> None:
        """Store the endpoint's new url, types, description, secret, status and failing run;
        when it is disabled its pending deliveries stop (no attempt due), when enabled they
        are due at ``updated_at``."""
        ...

    async def delete_endpoint(self, account_id: str, endpoint_id: str) -> bool:
        """Delete one of the account's endpoints and its deliveries; False if it has none."""
        ...

    async def deliveries_page(
        self, endpoint_id: str, before: str | None, limit: int
    ) -> list[DeliveryRow]:
        """Up to ``limit`` of the endpoint's deliveries, newest first, before the cursor id,
        with their attempts."""
        ...

    async def delivery(self, endpoint_id: str, delivery_id: str) -> DeliveryRow | None:
        """One of the endpoint's deliveries, or None."""
        ...

    async def requeue(self, delivery_id: str, now: datetime) -> None:
        """Make the delivery pending and due ``now``, as a new run (no failures, no first
        attempt)."""
        ...

    async def take_due(self, now: datetime, limit: int, hold_until: datetime) -> list[DueDelivery]:
        """Up to ``limit`` pending deliveries due by ``now`` of enabled endpoints (those of
        disabled ones never count against ``limit``), oldest due first, skipping those
        another transaction holds; they are not due again before ``hold_until`` (an attempt
        that never reports is retried then)."""
        ...

    async def record_attempt(
        self, delivery: DeliveryRow, attempt: AttemptRow, *, taken: DeliveryRow
    ) -> bool:
        """Log the attempt and store the delivery's status, counts and next attempt — none
        while its endpoint is not enabled (disabled while the attempt was made: its deliveries
        stay stopped). Nothing is stored, and False returned, when the delivery is no longer
        as it was ``taken`` (same attempts, still held or stopped): a redelivery or another
        take superseded this attempt."""
        ...

    async def endpoint_succeeded(self, endpoint_id: str) -> None:
        """The endpoint's failing run, if any, is over."""
        ...

    async def endpoint_failed(self, endpoint_id: str, now: datetime) -> EndpointRow | None:
        """The endpoint is failing since ``now`` unless it was already; the endpoint (None
        once deleted)."""
        ...
