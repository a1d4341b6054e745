"""Routes under /v1/webhook-endpoints: the calling account's webhook endpoints and their
delivery logs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse

from gpux_gateway.adapters.webhook_sender import HttpWebhooks, WebhookTargets
from gpux_gateway.domain import webhooks as rules
from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.entrypoints.dependencies import GatewayDep, PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import (
    Cursor,
    Page,
    PageQueryDep,
    ResourceId,
    field_error,
    problem_responses,
)
from gpux_gateway.notifications.types import ACCOUNT_EVENT_TYPES
from gpux_gateway.service.access import account_id_for
from gpux_gateway.webhooks import service
from gpux_gateway.webhooks.schemas import (
    NewWebhookEndpoint,
    WebhookDeliveryOut,
    WebhookEndpointChange,
    WebhookEndpointOut,
    WebhookEndpointWithSecret,
    WebhookPingOut,
)

router = APIRouter(prefix="/v1/webhook-endpoints", tags=["webhooks"])
PING_TIMEOUT_S = 10.0
NO_STORE = "no-store"
"""The ``Cache-Control`` of an answer showing a secret."""


def _manager(who: Principal) -> str:
    return account_id_for(who, Scope.KEYS_MANAGE)


def _reader(who: Principal) -> str:
    return account_id_for(who, Scope.READ)


async def _url(gw: GatewayDep, url: str) -> str:
    # Resolves the host (up to RESOLVE_TIMEOUT_S): called with no unit of work open.
    refusal = await WebhookTargets(allow_private=gw.settings.webhooks_allow_private).refusal(url)
    if refusal is not None:
        raise field_error(("body", "url"), refusal)
    return url


def _types(types: list[str]) -> tuple[str, ...]:
    error = rules.event_types_error(types, ACCOUNT_EVENT_TYPES)
    if error is not None:
        raise field_error(("body", "event_types"), error)
    return rules.subscription(types)


@router.post(
    "",
    status_code=201,
    response_model=WebhookEndpointWithSecret,
    summary="Add a webhook endpoint (its secret is shown once)",
)
async def create_webhook_endpoint(
    *, body: NewWebhookEndpoint, who: PrincipalDep, gw: GatewayDep, idem: IdempotencyDep
) -> JSONResponse:
    account_id = _manager(who)
    types = _types(body.event_types)
    once = idem.once(body, scope=account_id)
    url = await _url(gw, body.url)
    async with gw.unit_of_work() as uow:
        outcome = await service.create(
            uow, account_id, url=url, event_types=types, description=body.description, once=once
        )
        created = outcome.body.get("id") if 200 <= outcome.status_code < 300 else None
        shown = await service.secret(uow, account_id, created) if created else None
        await uow.commit()
    answer = idem.answer(outcome, reveal={"secret": shown} if shown else None)
    answer.headers["Cache-Control"] = NO_STORE
    return answer


@router.get("", response_model=Page[WebhookEndpointOut], summary="The account's webhook endpoints")
async def list_webhook_endpoints(
    who: PrincipalDep, uow: UnitOfWorkDep, page: PageQueryDep
) -> Page[WebhookEndpointOut]:
    return await service.page(uow, _reader(who), limit=page.limit, cursor=page.cursor)


@router.get("/{endpoint_id}", response_model=WebhookEndpointOut, summary="One webhook endpoint")
async def get_webhook_endpoint(
    endpoint_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> WebhookEndpointOut:
    return await service.get(uow, _reader(who), endpoint_id)


@router.patch(
    "/{endpoint_id}",
    response_model=WebhookEndpointOut,
    summary="Change a webhook endpoint (status enabled: re-enable it)",
)
async def update_webhook_endpoint(
    endpoint_id: ResourceId,
    body: WebhookEndpointChange,
    who: PrincipalDep,
    gw: GatewayDep,
) -> WebhookEndpointOut:
    account_id = _manager(who)
    types = _types(body.event_types) if body.event_types is not None else None
    if body.url is not None:
        await _url(gw, body.url)
    async with gw.unit_of_work() as uow:
        changed = await service.update(uow, account_id, endpoint_id, body, types)
        await uow.commit()
    return changed


@router.delete("/{endpoint_id}", status_code=204, summary="Delete a webhook endpoint")
async def delete_webhook_endpoint(
    endpoint_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> Response:
    await service.delete(uow, _manager(who), endpoint_id)
    return Response(status_code=204)


@router.post(
    "/{endpoint_id}/rotate-secret",
    response_model=WebhookEndpointWithSecret,
    summary="Replace the endpoint's signing secret (the new one is shown once)",
)
async def rotate_webhook_secret(
    endpoint_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep, response: Response
) -> WebhookEndpointWithSecret:
    response.headers["Cache-Control"] = NO_STORE
    return await service.rotate_secret(uow, _manager(who), endpoint_id)


@router.get(
    "/{endpoint_id}/deliveries",
    response_model=Page[WebhookDeliveryOut],
    summary="The endpoint's delivery log, newest first",
)
async def list_webhook_deliveries(
    endpoint_id: ResourceId,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Cursor = None,
) -> Page[WebhookDeliveryOut]:
    # Its own query parameters, not ``PageQueryDep``: FastAPI would report a dependency's
    # errors before the path's, and a bad ``endpoint_id`` stays the first problem named.
    return await service.deliveries(uow, _reader(who), endpoint_id, limit=limit, cursor=cursor)


@router.post(
    "/{endpoint_id}/deliveries/{delivery_id}/redeliver",
    status_code=202,
    response_model=WebhookDeliveryOut,
    summary="Send a delivery again, now",
    responses=problem_responses((409, "The endpoint is disabled")),
)
async def redeliver_webhook_delivery(
    endpoint_id: ResourceId, delivery_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> WebhookDeliveryOut:
    return await service.redeliver(uow, _manager(who), endpoint_id, delivery_id)


@router.post(
    "/{endpoint_id}/ping",
    response_model=WebhookPingOut,
    summary="Send the endpoint a signed test event now, and see what it answered",
)
async def ping_webhook_endpoint(
    endpoint_id: ResourceId, who: PrincipalDep, gw: GatewayDep
) -> WebhookPingOut:
    account_id = _manager(who)
    async with gw.unit_of_work() as uow:
        request = await service.ping_request(uow, account_id, endpoint_id)
        await uow.commit()
    targets = WebhookTargets(allow_private=gw.settings.webhooks_allow_private)
    sender = HttpWebhooks(targets, timeout_s=PING_TIMEOUT_S)
    try:
        return await service.ping(request, sender)
    finally:
        await sender.aclose()
