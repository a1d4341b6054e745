"""Routes /v1/payouts (sellers) and /v1/admin/payouts/{id}/confirm and /reject (admin)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import GatewayDep, PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import Page, PageQueryDep, ResourceId, problem_responses
from gpux_gateway.payouts import service
from gpux_gateway.payouts.schemas import (
    NewPayout,
    PayoutConfirmIn,
    PayoutDecisionAccepted,
    PayoutOut,
    PayoutRejectIn,
)
from gpux_gateway.service.access import account_id_for, admin_only

router = APIRouter(tags=["payouts"])

DECIDED = problem_responses((409, "The payout is paid or rejected already"))
"""The 409 of an admin's decision: billing paid or rejected the payout already."""


@router.post(
    "/v1/payouts",
    status_code=202,
    response_model=PayoutOut,
    summary="Ask for a payout of the seller's payable earnings (sellers)",
    description=(
        "The payout is `pending_request` until billing decides: `pending` (taken from the"
        " payable balance, on its way), or `rejected` with a reason when the payable balance"
        " does not cover it. An amount below the minimum payout is a 422."
    ),
)
async def request_payout(
    *, body: NewPayout, who: PrincipalDep, gw: GatewayDep, uow: UnitOfWorkDep, idem: IdempotencyDep
) -> JSONResponse:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    service.check_minimum(body, gw.settings.payout_minimum)
    once = idem.once(body, scope=seller_id)
    return idem.answer(await service.request(uow, seller_id=seller_id, body=body, once=once))


@router.get("/v1/payouts", response_model=Page[PayoutOut], summary="The seller's payouts")
async def list_payouts(
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    page: PageQueryDep,
) -> Page[PayoutOut]:
    seller_id = account_id_for(who, Scope.READ, Role.SELLER)
    return await service.page(uow, seller_id, limit=page.limit, cursor=page.cursor)


@router.get("/v1/payouts/{payout_id}", response_model=PayoutOut, summary="One payout")
async def get_payout(payout_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> PayoutOut:
    seller_id = account_id_for(who, Scope.READ, Role.SELLER)
    return await service.get(uow, seller_id, payout_id)


@router.post(
    "/v1/admin/payouts/{payout_id}/confirm",
    status_code=202,
    response_model=PayoutDecisionAccepted,
    summary="Confirm a payout's bank transfer was made (admin)",
    tags=["admin"],
    responses=DECIDED,
)
async def confirm_payout(
    payout_id: ResourceId, body: PayoutConfirmIn, who: PrincipalDep, uow: UnitOfWorkDep
) -> PayoutDecisionAccepted:
    admin_only(who)
    return await service.confirm(uow, payout_id, body.reference)


@router.post(
    "/v1/admin/payouts/{payout_id}/reject",
    status_code=202,
    response_model=PayoutDecisionAccepted,
    summary="Reject a pending payout: its amount goes back to the seller (admin)",
    tags=["admin"],
    responses=DECIDED,
)
async def reject_payout(
    payout_id: ResourceId, body: PayoutRejectIn, who: PrincipalDep, uow: UnitOfWorkDep
) -> PayoutDecisionAccepted:
    admin_only(who)
    return await service.reject(uow, payout_id, body.reason)
