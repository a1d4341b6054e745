"""The webhook dispatcher's work: take due deliveries, POST each (signed) through a
``Sender``, and record what came of it — success, a retry later, or failure; an endpoint
failing for too long is disabled.

The attempts of one round run in parallel; their outcomes are recorded in one unit of work.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from gpux_contracts.webhooks import EVENT_ID_HEADER, SIGNATURE_HEADER, sign
from gpux_gateway.domain import webhooks as rules
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork, UnitOfWorkFactory
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryStatus,
    DueDelivery,
    EndpointStatus,
    WebhookEvent,
)
from gpux_platform.clock import Clock

USER_AGENT = "gpux-webhooks/1"
DELIVERY_ID_HEADER = "Gpux-Delivery-Id"


@dataclass(frozen=True, slots=True)
class Sent:
    """What one POST got: the receiver's status, or the error that stopped it."""

    status: int | None
    error: str | None
    duration_ms: int


class Sender(Protocol):
    """POSTs a delivery to its URL (checking, right before, where the URL leads)."""

    async def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Sent:
        """POST ``body``; a 2xx status is a success, anything else a failure."""
        ...


@dataclass(frozen=True, slots=True)
class DispatchConfig:
    """How the dispatcher works: the retry schedule, how many deliveries a round takes (and
    sends at once), and how long a taken delivery is held from other replicas."""

    policy: rules.RetryPolicy = field(default_factory=rules.RetryPolicy)
    batch: int = 16
    hold: timedelta = timedelta(seconds=60)


def event_body(event: WebhookEvent) -> bytes:
    """The POSTed JSON: ``{"id", "type", "created_at", "account_id", "data"}``."""
    shape = {
        "id": event.id,
        "type": event.type,
        "created_at": event.created_at.isoformat().replace("+00:00", "Z"),
        "account_id": event.account_id,
        "data": event.data,
    }
    return json.dumps(shape, separators=(",", ":"), ensure_ascii=False).encode()


def signed_headers(
    secret: str, body: bytes, at: datetime, *, event_id: str, delivery_id: str
) -> dict[str, str]:
    """The headers of a POST of ``body`` at ``at``, signed with ``secret``."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        SIGNATURE_HEADER: sign(secret, body, int(at.timestamp())),
        EVENT_ID_HEADER: event_id,
        DELIVERY_ID_HEADER: delivery_id,
    }


def request_headers(due: DueDelivery, body: bytes, at: datetime) -> dict[str, str]:
    """The headers of an attempt at ``at``, signed with the endpoint's secret."""
    return signed_headers(due.secret, body, at, event_id=due.event.id, delivery_id=due.delivery.id)


async def record(
    uow: GatewayUnitOfWork,
    due: DueDelivery,
    sent: Sent,
    *,
    at: datetime,
    policy: rules.RetryPolicy,
    jitter: float,
) -> None:
    """Log the attempt made at ``at`` and move the delivery on: succeeded (and the endpoint's
    failing run over), pending with its next attempt, or failed; the endpoint failing for
    ``policy.retry_for`` is disabled. An attempt superseded meanwhile (the delivery was
    redelivered, or taken again once its hold ran out) is not recorded."""
    d = due.delivery
    first = d.first_attempt_at or at
    attempt = AttemptRow(d.id, d.attempts + 1, at, sent.status, sent.error, sent.duration_ms)
    base = dataclasses.replace(
        d, attempts=d.attempts + 1, first_attempt_at=first, last_attempt_at=at
    )
    base = dataclasses.replace(base, last_status=sent.status, last_error=sent.error)
    if rules.is_success(sent.status):
        done = dataclasses.replace(base, status=DeliveryStatus.SUCCEEDED, next_attempt_at=None)
        if await uow.webhooks.record_attempt(done, attempt, taken=d):
            await uow.webhooks.endpoint_succeeded(d.endpoint_id)
        return
    failures = d.run_failures + 1
    due_at = rules.next_attempt(first, uow.now, failures, policy, jitter)
    status = DeliveryStatus.PENDING if due_at is not None else DeliveryStatus.FAILED
    failed = dataclasses.replace(base, status=status, run_failures=failures, next_attempt_at=due_at)
    if not await uow.webhooks.record_attempt(failed, attempt, taken=d):
        return
    endpoint = await uow.webhooks.endpoint_failed(d.endpoint_id, at)
    if (
        endpoint is not None
        and endpoint.status is EndpointStatus.ENABLED
        and endpoint.failing_since is not None
        and rules.endpoint_gives_up(
            endpoint.failing_since, uow.now, policy, first if due_at is None else None
        )
    ):
        reason = rules.disabled_reason(endpoint.failing_since, policy)
        await uow.webhooks.update_endpoint(
            dataclasses.replace(
                endpoint,
                status=EndpointStatus.DISABLED,
                disabled_reason=reason,
                updated_at=uow.now,
            )
        )


async def _attempt(sender: Sender, due: DueDelivery, clock: Clock) -> tuple[Sent, datetime]:
    at = clock.now()
    body = event_body(due.event)
    return await sender.send(due.url, body, request_headers(due, body, at)), at


async def dispatch_once(
    units: UnitOfWorkFactory,
    sender: Sender,
    clock: Clock,
    config: DispatchConfig,
    jitter: Callable[[], float] = lambda: random.uniform(-1.0, 1.0),
) -> int:
    """One round: take up to ``config.batch`` due deliveries, send them at once, record what
    came of each; returns how many were taken."""
    async with units() as uow:
        taken = await uow.webhooks.take_due(uow.now, config.batch, uow.now + config.hold)
        await uow.commit()
    if not taken:
        return 0
    results = await asyncio.gather(*(_attempt(sender, due, clock) for due in taken))
    async with units() as uow:
        for due, (sent, at) in zip(taken, results, strict=True):
            await record(uow, due, sent, at=at, policy=config.policy, jitter=jitter())
        await uow.commit()
    return len(taken)
