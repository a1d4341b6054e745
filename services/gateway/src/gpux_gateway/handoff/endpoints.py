"""Routes /v1/leases/{id}/access and /v1/leases/{id}/failure: the access handoff.

Both POSTs are idempotent by nature (a post replaces the details; each report goes to billing
once per lease), so they take no Idempotency-Key: a retry does what the first call did.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.domain.handoff import AccessDetailsError
from gpux_gateway.entrypoints.dependencies import GatewayDep, PrincipalDep, UnitOfWorkDep
from gpux_gateway.entrypoints.schemas import field_error, problem_responses
from gpux_gateway.handoff import service
from gpux_gateway.handoff.schemas import (
    AccessIn,
    AccessOut,
    AccessPosted,
    FailureIn,
    FailureReported,
)
from gpux_gateway.leases.schemas import LeaseId
from gpux_gateway.service.access import account_id_for
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork

router = APIRouter()
"""Included in the leases router, whose tag it takes."""

NOT_THE_SELLER = (404, "Not a lease of the caller's offers (its buyer is answered 404 too)")
"""The 404 of a route for the lease's seller only (``_the_seller``)."""


async def _the_seller(who: Principal, uow: GatewayUnitOfWork, lease_id: str) -> str:
    """The caller's account id if it is the lease's seller (anyone else: 404, the buyer too)
    and its key may write offers (else 403)."""
    account_id = account_id_for(who, Scope.READ)
    await service.sold_by(uow, account_id, lease_id)
    return account_id_for(who, Scope.OFFERS_WRITE)


@router.post(
    "/v1/leases/{lease_id}/access",
    response_model=AccessPosted,
    summary="Hand the buyer access to a lease's machines (its seller)",
    description=(
        "`host` + `port` + `user` (SSH; the buyer's keys came with `lease.provisioning`) or "
        "`endpoint_url` (https, or http), and `notes`. Stored sealed (AES-256-GCM) for the "
        "lease's buyer only; posting again replaces them. While the lease is `provisioning` "
        "the first post reports it ready to billing (`lease.ready_reported`): it runs and is "
        "charged from then (`lease.ready`). Anyone but the lease's seller: 404 (the buyer "
        "too); the seller's key without `offers:write`: 403. A failed or "
        "ended lease: 409 `/problems/lease-failed` / `/problems/lease-ended`."
    ),
    responses=problem_responses(
        NOT_THE_SELLER,
        (409, "The lease failed or ended (`/problems/lease-failed`, `/problems/lease-ended`)"),
    ),
)
async def post_lease_access(
    *, lease_id: LeaseId, body: AccessIn, who: PrincipalDep, uow: UnitOfWorkDep, gw: GatewayDep
) -> AccessPosted:
    seller_id = await _the_seller(who, uow, lease_id)
    try:
        details = body.details()
    except AccessDetailsError as exc:
        raise field_error(("body", exc.field), exc.message) from None
    return await service.post_access(
        uow, gw.access_cipher, seller_id=seller_id, lease_id=lease_id, details=details
    )


@router.get(
    "/v1/leases/{lease_id}/access",
    response_model=AccessOut,
    summary="How to reach a lease's machines (its buyer)",
    description=(
        "The details the seller posted, decrypted. Only the lease's buyer reads them (anyone "
        "else, the seller too: 404 `/problems/not-found`); 404 `/problems/no-access` while "
        "none were posted; 410 `/problems/access-erased` once erased "
        "(`GPUX_ACCESS_RETENTION_S`, 24 h by default, after the lease ended or failed)."
    ),
    responses=problem_responses(
        (404, "The seller posted no access yet (`/problems/no-access`)"),
        (410, "Erased after the lease ended (`/problems/access-erased`)"),
    ),
)
async def get_lease_access(
    lease_id: LeaseId, who: PrincipalDep, uow: UnitOfWorkDep, gw: GatewayDep, response: Response
) -> AccessOut:
    buyer_id = account_id_for(who, Scope.READ)
    response.headers["Cache-Control"] = "no-store"  # the details are secrets
    return await service.get_access(uow, gw.access_cipher, buyer_id=buyer_id, lease_id=lease_id)


@router.post(
    "/v1/leases/{lease_id}/failure",
    status_code=202,
    response_model=FailureReported,
    summary="Report that a provisioning lease cannot be delivered (its seller)",
    description=(
        "Sends `lease.failure_reported` to billing (once per lease), which ends the lease "
        "`failed` with nothing charged (`lease.ended`, `failure` `seller_reported`, the "
        "`detail`). Anyone but the lease's seller: 404 (the buyer too); the seller's key "
        "without `offers:write`: 403; a lease not provisioning: 409 "
        "`/problems/lease-not-provisioning`."
    ),
    responses=problem_responses(
        NOT_THE_SELLER,
        (409, "The lease is not provisioning (`/problems/lease-not-provisioning`)"),
    ),
)
async def report_lease_failure(
    *, lease_id: LeaseId, body: FailureIn, who: PrincipalDep, uow: UnitOfWorkDep
) -> FailureReported:
    seller_id = await _the_seller(who, uow, lease_id)
    return await service.report_failure(
        uow, seller_id=seller_id, lease_id=lease_id, detail=body.detail
    )
