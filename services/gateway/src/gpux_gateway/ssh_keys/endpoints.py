"""Routes under /v1/accounts/me/ssh-keys: the calling buyer's SSH public keys."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_gateway.domain import ssh_keys as ssh_key_rules
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import (
    Page,
    PageQueryDep,
    ResourceId,
    field_error,
    problem_responses,
)
from gpux_gateway.service.access import account_id_for
from gpux_gateway.ssh_keys import service
from gpux_gateway.ssh_keys.schemas import NewSshKey, SshKeyOut

router = APIRouter(prefix="/v1/accounts", tags=["accounts"])


@router.post(
    "/me/ssh-keys",
    status_code=201,
    response_model=SshKeyOut,
    summary="Register an SSH public key",
    responses=problem_responses((409, "The account registered this key already")),
)
async def create_ssh_key(
    *, body: NewSshKey, who: PrincipalDep, uow: UnitOfWorkDep, idem: IdempotencyDep
) -> JSONResponse:
    account_id = account_id_for(who, Scope.KEYS_MANAGE, Role.BUYER)
    try:
        key = ssh_key_rules.parse(body.public_key)
    except ssh_key_rules.SshKeyError as exc:
        raise field_error(("body", "public_key"), str(exc)) from None
    once = idem.once(body, scope=account_id)
    outcome = await service.create(uow, account_id, name=body.name, key=key, once=once)
    return idem.answer(outcome)


@router.get("/me/ssh-keys", response_model=Page[SshKeyOut], summary="The account's SSH public keys")
async def list_ssh_keys(
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    page: PageQueryDep,
) -> Page[SshKeyOut]:
    account_id = account_id_for(who, Scope.READ, Role.BUYER)
    return await service.page(uow, account_id, limit=page.limit, cursor=page.cursor)


@router.get("/me/ssh-keys/{key_id}", response_model=SshKeyOut, summary="One SSH public key")
async def get_ssh_key(key_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> SshKeyOut:
    account_id = account_id_for(who, Scope.READ, Role.BUYER)
    return await service.get(uow, account_id, key_id)


@router.delete("/me/ssh-keys/{key_id}", status_code=204, summary="Delete an SSH public key")
async def delete_ssh_key(key_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> Response:
    account_id = account_id_for(who, Scope.KEYS_MANAGE, Role.BUYER)
    await service.delete(uow, account_id, key_id)
    return Response(status_code=204)
