"""Routes under /v1/admin (admin only): suspend, reactivate and credit accounts; publish an FX
rate."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import AccountStatus
from gpux_gateway.accounts import service as accounts
from gpux_gateway.accounts.schemas import AccountOut
from gpux_gateway.admin import service
from gpux_gateway.admin.schemas import CreditAccepted, CreditIn, FxRateAccepted, FxRateIn
from gpux_gateway.entrypoints.dependencies import PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import ResourceId
from gpux_gateway.service.access import admin_only

router = APIRouter(prefix="/v1/admin", tags=["admin"])


@router.post("/accounts/{account_id}/suspend", response_model=AccountOut, summary="Suspend")
async def suspend_account(
    account_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> AccountOut:
    admin_only(who)
    return await accounts.set_status(uow, account_id, AccountStatus.SUSPENDED)


@router.post("/accounts/{account_id}/reactivate", response_model=AccountOut, summary="Reactivate")
async def reactivate_account(
    account_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> AccountOut:
    admin_only(who)
    return await accounts.set_status(uow, account_id, AccountStatus.ACTIVE)


@router.post(
    "/accounts/{account_id}/credits",
    status_code=202,
    response_model=CreditAccepted,
    summary="Credit an account's wallet (billing books it)",
)
async def credit_account(
    *,
    account_id: ResourceId,
    body: CreditIn,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    admin_only(who)
    once = idem.once(body, scope="admin")
    return idem.answer(await service.credit(uow, account_id=account_id, body=body, once=once))


@router.post(
    "/fx-rates",
    status_code=202,
    response_model=FxRateAccepted,
    summary="Publish an FX rate into EUR, as of now (audited; stands until a newer one)",
)
async def publish_fx_rate(
    body: FxRateIn, who: PrincipalDep, uow: UnitOfWorkDep, idem: IdempotencyDep
) -> JSONResponse:
    admin_only(who)
    once = idem.once(body, scope="admin")
    return idem.answer(await service.publish_rate(uow, body=body, once=once))
