"""Routes under /v1/accounts/me/keys: the calling account's API keys."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from gpux_gateway.domain import keys as key_format
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import GatewayDep, PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import ResourceId, problem_responses
from gpux_gateway.keys import service
from gpux_gateway.keys.schemas import KeyCreated, KeyList, NewKey
from gpux_gateway.service.access import account_id_for

router = APIRouter(prefix="/v1/accounts", tags=["accounts"])


@router.get("/me/keys", response_model=KeyList, summary="The account's API keys")
async def list_api_keys(who: PrincipalDep, uow: UnitOfWorkDep) -> KeyList:
    account_id = account_id_for(who, Scope.READ)
    return await service.of_account(uow, account_id)


@router.post(
    "/me/keys",
    status_code=201,
    response_model=KeyCreated,
    summary="Create an API key",
    responses=problem_responses(
        (403, "The account's roles do not allow a scope asked for (`/problems/scope-not-allowed`)"),
        (422, "`scopes` is empty: a key needs at least one (`/problems/invalid-scopes`)"),
    ),
)
async def create_api_key(
    *,
    body: NewKey,
    who: PrincipalDep,
    gw: GatewayDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    key = idem.key()
    account_id = account_id_for(who, Scope.KEYS_MANAGE)
    scopes = service.scopes_of(who.roles, body)
    material = service.new_material(gw.pepper, account_id, key)
    once = idem.once(body, scope=account_id)
    outcome = await service.create(
        uow,
        gw.pepper,
        account_id=account_id,
        body=body,
        scopes=scopes,
        material=material,
        once=once,
    )
    return idem.answer(outcome, reveal={"api_key": key_format.format_key(*material)})


@router.delete("/me/keys/{key_id}", status_code=204, summary="Revoke an API key")
async def revoke_api_key(key_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> Response:
    account_id = account_id_for(who, Scope.KEYS_MANAGE)
    await service.revoke(uow, account_id, key_id)
    return Response(status_code=204)
