"""Routes /v1/accounts (sign-up) and /v1/accounts/me (the calling account)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_gateway.accounts import service
from gpux_gateway.accounts.schemas import AccountOut, SignedUp, SignUp
from gpux_gateway.domain import keys as key_format
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import (
    AnonymousLimit,
    AnonymousUnitOfWorkDep,
    GatewayDep,
    PrincipalDep,
    UnitOfWorkDep,
)
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.keys import service as keys
from gpux_gateway.service.access import account_id_for

router = APIRouter(prefix="/v1/accounts", tags=["accounts"])

ANONYMOUS = "anonymous"
"""The idempotency scope of sign-ups (no account yet)."""


@router.post(
    "",
    status_code=201,
    response_model=SignedUp,
    dependencies=[AnonymousLimit],
    summary="Sign up: a new account and its first API key (shown once)",
)
async def sign_up(
    body: SignUp, gw: GatewayDep, uow: AnonymousUnitOfWorkDep, idem: IdempotencyDep
) -> JSONResponse:
    material = keys.new_material(gw.pepper, ANONYMOUS, idem.key())
    once = idem.once(body, scope=ANONYMOUS)
    outcome = await service.sign_up(uow, gw.pepper, body=body, material=material, once=once)
    return idem.answer(outcome, reveal={"api_key": key_format.format_key(*material)})


@router.get("/me", response_model=AccountOut, summary="The calling account")
async def get_me(who: PrincipalDep, uow: UnitOfWorkDep) -> AccountOut:
    account_id = account_id_for(who, Scope.READ)
    return await service.get(uow, account_id)
