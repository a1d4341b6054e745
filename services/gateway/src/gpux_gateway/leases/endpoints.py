"""Routes /v1/leases, /v1/ledger and /v1/accounts/me/earnings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from gpux_contracts.accounts import Role
from gpux_contracts.leases import LeaseStatus
from gpux_contracts.money import Currency
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import problem_responses
from gpux_gateway.handoff.endpoints import router as handoff_router
from gpux_gateway.leases import service
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.leases.schemas import (
    EarningsList,
    InterruptionOut,
    LeaseCursor,
    LeaseId,
    LeaseOut,
    LeasePage,
    LeaseRole,
    LedgerPage,
    LineCursor,
    StopAccepted,
)
from gpux_gateway.service.access import account_id_for

router = APIRouter(tags=["leases"])

Limit = Annotated[int, Query(ge=1, le=100, description="Items per page.")]


class _NoBody(BaseModel):
    """What a body-less request is fingerprinted as, for its Idempotency-Key."""


@router.get(
    "/v1/leases",
    response_model=LeasePage,
    summary="The account's leases: those it rents and those it provides",
    description=(
        "A buyer sees the leases it rents, a seller those of its offers, an account with "
        "both roles both (`role` narrows it). In lease id order. A lease shows once the "
        "gateway has read its `lease.opened`. `status` filters by the status shown now: "
        "`scheduled` (starts later), `provisioning` (the seller sets it up), `running`, "
        "`interrupting`, `ended` or `failed`."
    ),
)
async def list_leases(
    *,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    status: LeaseStatus | None = None,
    role: LeaseRole | None = None,
    limit: Limit = 50,
    cursor: LeaseCursor = None,
) -> LeasePage:
    required = None if role is None else Role(role.value)
    account_id = account_id_for(who, Scope.READ, required)
    which = LeaseFilter(
        account_id,
        role=None if role is None else role.value,
        status=None if status is None else status.value,
    )
    return await service.page(uow, which, limit=limit, cursor=cursor)


@router.get(
    "/v1/leases/{lease_id}",
    response_model=LeaseOut,
    summary="One lease the account rents or provides",
)
async def get_lease(lease_id: LeaseId, who: PrincipalDep, uow: UnitOfWorkDep) -> LeaseOut:
    account_id = account_id_for(who, Scope.READ)
    return await service.get(uow, account_id, lease_id)


@router.post(
    "/v1/leases/{lease_id}/stop",
    status_code=202,
    response_model=StopAccepted,
    summary="Stop a running lease (its buyer)",
    description=(
        "Sends `lease.stop_requested` to billing, which ends the lease at `requested_at` "
        "(or where it is already paid up to) and answers with `lease.ended`. The lease's "
        "seller is refused with 403 `/problems/lease-buyer-only` (it sees the lease, so "
        "nothing leaks); an ended lease is 409 `/problems/lease-ended`."
    ),
    responses=problem_responses(
        (403, "The lease's seller, not its buyer (`/problems/lease-buyer-only`)"),
        (409, "The lease ended or failed already (`/problems/lease-ended`)"),
    ),
)
async def stop_lease(
    *,
    lease_id: LeaseId,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    buyer_id = account_id_for(who, Scope.WALLET_WRITE, Role.BUYER)
    once = idem.once(_NoBody(), scope=buyer_id)
    return idem.answer(await service.stop(uow, buyer_id=buyer_id, lease_id=lease_id, once=once))


@router.get(
    "/v1/leases/{lease_id}/interruption",
    response_model=InterruptionOut,
    summary="A lease's pending interruption, for code on the rented machine",
    description=(
        "Poll it as EC2's spot `instance-action` metadata: 404 "
        "`/problems/no-interruption` while none is pending; 200 once the lease's "
        "`lease.interruption_notice` was read, with `action: terminate`, `cause`, "
        "`noticed_at`, `interrupt_at` and `seconds_left` (never below 0): checkpoint within "
        "them. Any key of the lease's buyer (or seller) with `read`; anyone else's lease is "
        "404 `/problems/not-found`."
    ),
    responses=problem_responses(
        (404, "No interruption of the lease is pending (`/problems/no-interruption`)")
    ),
)
async def get_lease_interruption(
    lease_id: LeaseId, who: PrincipalDep, uow: UnitOfWorkDep
) -> InterruptionOut:
    account_id = account_id_for(who, Scope.READ)
    return await service.interruption(uow, account_id, lease_id)


@router.post(
    "/v1/leases/{lease_id}/reclaim",
    status_code=202,
    response_model=LeaseOut,
    summary="Take an interruptible lease's GPUs back (the seller of its offer)",
    description=(
        "Sends `lease.reclaim_requested` to the book (`capacity.commands`, key: GPU id), "
        "which interrupts the lease with the offer's notice: the lease shows `interrupting` "
        "with `interrupt_at` once billing's notice was read, and when it ends its GPUs "
        "leave the offer (a `PATCH gpus` adds them again). Answers the lease as it stands. "
        "`Idempotency-Key` supported. Another account's lease: 404; the lease's buyer: 403 "
        "`/problems/lease-seller-only`; 409 for an on-demand lease "
        "(`/problems/lease-not-interruptible`), an ended one (`/problems/lease-ended`) or "
        "one already interrupting (`/problems/lease-interrupting`)."
    ),
    responses=problem_responses(
        (403, "The lease's buyer, not the seller of its offer (`/problems/lease-seller-only`)"),
        (
            409,
            "The lease ended (`/problems/lease-ended`), is on demand"
            " (`/problems/lease-not-interruptible`) or is being interrupted already"
            " (`/problems/lease-interrupting`)",
        ),
    ),
)
async def reclaim_lease(
    *,
    lease_id: LeaseId,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    once = idem.once(_NoBody(), scope=seller_id)
    return idem.answer(
        await service.reclaim(uow, seller_id=seller_id, lease_id=lease_id, once=once)
    )


@router.get(
    "/v1/ledger",
    response_model=LedgerPage,
    summary="The account's statement: every entry on its balances, newest first",
    tags=["wallets"],
)
async def list_ledger_entries(
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    currency: Currency | None = None,
    limit: Limit = 50,
    cursor: LineCursor = None,
) -> LedgerPage:
    account_id = account_id_for(who, Scope.READ)
    return await service.statement(
        uow,
        account_id,
        currency=None if currency is None else currency.value,
        limit=limit,
        cursor=cursor,
    )


@router.get(
    "/v1/accounts/me/earnings",
    response_model=EarningsList,
    summary="What the seller's leases earned, per offer currency",
    description=(
        "Sums of the running totals of every lease of the seller's offers: `gross` was "
        "charged, `fee` is the platform's part, `net` the seller's."
    ),
    tags=["accounts"],
)
async def list_earnings(who: PrincipalDep, uow: UnitOfWorkDep) -> EarningsList:
    seller_id = account_id_for(who, Scope.READ, Role.SELLER)
    return await service.earnings(uow, seller_id)


router.include_router(handoff_router)
"""The access handoff's routes (``handoff.endpoints``) under the leases'."""
