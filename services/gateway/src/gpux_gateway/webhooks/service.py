"""Webhook endpoints: creating (idempotently, the secret shown once), listing, reading,
changing, re-enabling, rotating the secret, deleting; the delivery log and redeliveries.

Every read and write names the caller's account, so another account's endpoint (or its
deliveries) is a 404. The routes check a URL (``UrlGuard``: its form and the addresses it
resolves to) and the event types before they reach these, with no unit of work open (a
resolution may take seconds); a ping is read in a unit (``ping_request``) and sent after it.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpux_contracts.ids import new_id
from gpux_gateway.domain import webhooks as rules
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.entrypoints.schemas import Page, split_page
from gpux_gateway.service.access import found
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.webhooks.dispatch import Sender, event_body, signed_headers
from gpux_gateway.webhooks.repository import (
    DeliveryStatus,
    EndpointRow,
    EndpointStatus,
    WebhookEvent,
)
from gpux_gateway.webhooks.schemas import (
    WebhookDeliveryOut,
    WebhookEndpointChange,
    WebhookEndpointOut,
    WebhookEndpointWithSecret,
    WebhookPingOut,
    delivery_out,
    endpoint_out,
    endpoint_with_secret,
)
from gpux_platform.problems import ProblemError

ID_PREFIX = "whe_"


def new_secret() -> str:
    """A fresh signing secret: ``whsec_`` and 32 random bytes, url-safe base64."""
    return rules.KEY_PREFIX + secrets.token_urlsafe(32)


async def create(
    uow: GatewayUnitOfWork,
    account_id: str,
    *,
    url: str,
    event_types: tuple[str, ...],
    description: str,
    once: Once,
) -> Outcome:
    """Store an endpoint (URL and types already checked) once per Idempotency-Key. The
    answer kept for replays holds no secret: the route adds it (``secret``)."""

    async def make() -> tuple[int, dict[str, Any]]:
        row = EndpointRow(
            id=ID_PREFIX + new_id(),
            account_id=account_id,
            url=url,
            event_types=event_types,
            description=description,
            secret=new_secret(),
            status=EndpointStatus.ENABLED,
            disabled_reason=None,
            failing_since=None,
            created_at=uow.now,
            updated_at=uow.now,
        )
        await uow.webhooks.add_endpoint(row)
        return 201, endpoint_out(row).model_dump(mode="json")

    return await run_once(uow, once, make)


async def secret(uow: GatewayUnitOfWork, account_id: str, endpoint_id: str) -> str | None:
    """The signing secret of one of the account's endpoints (None if it has no such one)."""
    endpoint = await uow.webhooks.endpoint(account_id, endpoint_id)
    return None if endpoint is None else endpoint.secret


async def page(
    uow: GatewayUnitOfWork, account_id: str, *, limit: int, cursor: str | None
) -> Page[WebhookEndpointOut]:
    """A page of the account's endpoints, in id order."""
    rows = await uow.webhooks.endpoints_page(account_id, cursor, limit + 1)
    shown, more = split_page(rows, limit)
    return Page[WebhookEndpointOut](
        items=[endpoint_out(r) for r in shown], next_cursor=shown[-1].id if more else None
    )


async def mine(uow: GatewayUnitOfWork, account_id: str, endpoint_id: str) -> EndpointRow:
    """One of the account's endpoints; 404 for any other."""
    return found(await uow.webhooks.endpoint(account_id, endpoint_id), "webhook endpoint")


async def get(uow: GatewayUnitOfWork, account_id: str, endpoint_id: str) -> WebhookEndpointOut:
    """One of the account's endpoints, without its secret."""
    return endpoint_out(await mine(uow, account_id, endpoint_id))


def changed(
    row: EndpointRow,
    change: WebhookEndpointChange,
    types: tuple[str, ...] | None,
    now: datetime,
) -> EndpointRow:
    """The endpoint after ``change`` (URL and types checked); enabling it ends its failing
    run and clears the reason it was disabled."""
    new = dataclasses.replace(
        row,
        url=change.url if change.url is not None else row.url,
        event_types=types if types is not None else row.event_types,
        description=change.description if change.description is not None else row.description,
        updated_at=now,
    )
    if change.status is EndpointStatus.ENABLED and row.status is EndpointStatus.DISABLED:
        new = dataclasses.replace(
            new, status=EndpointStatus.ENABLED, disabled_reason=None, failing_since=None
        )
    elif change.status is EndpointStatus.DISABLED and row.status is EndpointStatus.ENABLED:
        new = dataclasses.replace(
            new, status=EndpointStatus.DISABLED, disabled_reason="disabled by the account"
        )
    return new


async def update(
    uow: GatewayUnitOfWork,
    account_id: str,
    endpoint_id: str,
    change: WebhookEndpointChange,
    types: tuple[str, ...] | None,
) -> WebhookEndpointOut:
    """Apply a checked change to one of the account's endpoints."""
    row = changed(await mine(uow, account_id, endpoint_id), change, types, uow.now)
    await uow.webhooks.update_endpoint(row)
    return endpoint_out(row)


async def rotate_secret(
    uow: GatewayUnitOfWork, account_id: str, endpoint_id: str
) -> WebhookEndpointWithSecret:
    """A new secret for one of the account's endpoints (the old one stops at once)."""
    row = await mine(uow, account_id, endpoint_id)
    row = dataclasses.replace(row, secret=new_secret(), updated_at=uow.now)
    await uow.webhooks.update_endpoint(row)
    return endpoint_with_secret(row)


async def delete(uow: GatewayUnitOfWork, account_id: str, endpoint_id: str) -> None:
    """Delete one of the account's endpoints and its delivery log; 404 for any other."""
    if not await uow.webhooks.delete_endpoint(account_id, endpoint_id):
        found(None, "webhook endpoint")


async def deliveries(
    uow: GatewayUnitOfWork, account_id: str, endpoint_id: str, *, limit: int, cursor: str | None
) -> Page[WebhookDeliveryOut]:
    """A page of one of the account's endpoints' deliveries, newest first."""
    await mine(uow, account_id, endpoint_id)
    rows = await uow.webhooks.deliveries_page(endpoint_id, cursor, limit + 1)
    shown, more = split_page(rows, limit)
    return Page[WebhookDeliveryOut](
        items=[delivery_out(r) for r in shown], next_cursor=shown[-1].id if more else None
    )


async def redeliver(
    uow: GatewayUnitOfWork, account_id: str, endpoint_id: str, delivery_id: str
) -> WebhookDeliveryOut:
    """Queue one of the endpoint's deliveries again, due now (a new run of retries); a 409
    while the endpoint is disabled."""
    endpoint = await mine(uow, account_id, endpoint_id)
    found(await uow.webhooks.delivery(endpoint_id, delivery_id), "webhook delivery")
    if endpoint.status is EndpointStatus.DISABLED:
        raise ProblemError(
            409,
            "webhook-endpoint-disabled",
            "Webhook endpoint disabled",
            "enable the endpoint (PATCH status=enabled) before redelivering",
        )
    await uow.webhooks.requeue(delivery_id, uow.now)
    delivery = found(await uow.webhooks.delivery(endpoint_id, delivery_id), "webhook delivery")
    assert delivery.status is DeliveryStatus.PENDING
    return delivery_out(delivery)


PING = "webhook.ping"
"""The type of a test ping's event (sent only to the endpoint pinged, never recorded)."""


@dataclass(frozen=True, slots=True)
class Ping:
    """A signed test POST, ready to be sent (with no unit of work open)."""

    event_id: str
    url: str
    body: bytes
    headers: dict[str, str]


async def ping_request(uow: GatewayUnitOfWork, account_id: str, endpoint_id: str) -> Ping:
    """A signed ``webhook.ping`` event for one of the account's endpoints (enabled or not);
    404 for any other."""
    endpoint = await mine(uow, account_id, endpoint_id)
    event = WebhookEvent(
        id="evt_ping_" + new_id(),
        type=PING,
        created_at=uow.now,
        account_id=account_id,
        data={"endpoint_id": endpoint.id},
    )
    body = event_body(event)
    headers = signed_headers(
        endpoint.secret, body, uow.now, event_id=event.id, delivery_id="whd_ping_" + new_id()
    )
    return Ping(event.id, endpoint.url, body, headers)


async def ping(request: Ping, sender: Sender) -> WebhookPingOut:
    """POST the ping now and say what the endpoint answered; nothing is queued or logged."""
    sent = await sender.send(request.url, request.body, request.headers)
    return WebhookPingOut(
        event_id=request.event_id,
        delivered=rules.is_success(sent.status),
        status=sent.status,
        error=sent.error,
        duration_ms=sent.duration_ms,
    )
