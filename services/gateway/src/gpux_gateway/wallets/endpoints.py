"""Routes /v1/topups, /v1/accounts/me/balances and /v1/admin/topups/{id}/confirm."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import GatewayDep, PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import ResourceId
from gpux_gateway.service.access import account_id_for, admin_only
from gpux_gateway.wallets import service
from gpux_gateway.wallets.schemas import (
    BalanceList,
    TopupAccepted,
    TopupConfirmAccepted,
    TopupIn,
)

router = APIRouter(tags=["wallets"])


@router.post(
    "/v1/topups",
    status_code=202,
    response_model=TopupAccepted,
    summary="Top up the wallet (buyers); billing books it when the provider confirms",
)
async def create_topup(
    *,
    body: TopupIn,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    buyer_id = account_id_for(who, Scope.WALLET_WRITE, Role.BUYER)
    once = idem.once(body, scope=buyer_id)
    return idem.answer(await service.top_up(uow, buyer_id=buyer_id, body=body, once=once))


@router.get(
    "/v1/accounts/me/balances",
    response_model=BalanceList,
    summary="Available and held balance per currency",
    description=(
        "One item per currency the account's wallet has ever used (a currency never "
        "topped up is absent, not zero), from billing's read model: a change shows "
        "once billing has booked it."
    ),
)
async def list_balances(who: PrincipalDep, gw: GatewayDep) -> BalanceList:
    buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
    return service.balances_out(await gw.balances.of_account(buyer_id))


@router.post(
    "/v1/admin/topups/{topup_id}/confirm",
    status_code=202,
    response_model=TopupConfirmAccepted,
    summary="Confirm a manual top-up's money arrived (admin)",
    tags=["admin"],
)
async def confirm_topup(
    topup_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep
) -> TopupConfirmAccepted:
    admin_only(who)
    return service.confirm(uow, topup_id)
