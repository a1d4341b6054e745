"""The access handoff: the seller posts access (sealed; reported to billing while the lease
provisions) or reports a failure; the buyer reads the details; the timer erases them.

Only the lease's seller posts and reports (anyone else: 404, also the buyer); only its buyer
reads (anyone else: 404, also the seller). Each report is sent once per lease
(``claim_report``), on ``billing.commands`` under the buyer's key and a stable event id.
"""

from __future__ import annotations

import logging

from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LeaseFailureReported, LeaseReadyReported, LeaseStatus
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.domain.handoff import (
    AccessDecodeError,
    AccessDetails,
    AccessUnreadable,
    access_refusal,
    decode,
    encode,
    erasable_before,
    may_report_failure,
    reports_ready,
)
from gpux_gateway.domain.leases import status_of
from gpux_gateway.handoff.repository import AccessCipher, LeaseAccessRow, ReportKind
from gpux_gateway.handoff.schemas import AccessOut, AccessPosted, FailureReported
from gpux_gateway.leases.repository import LeaseRow
from gpux_gateway.service.access import not_found
from gpux_gateway.service.commands import send
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError

log = logging.getLogger("gpux.gateway")

NO_ACCESS = "no-access"
"""The 404 of ``GET /v1/leases/{id}/access`` while the seller posted nothing."""
ACCESS_ERASED = "access-erased"
"""The 410 once the details were erased after the lease ended."""


async def _as(uow: GatewayUnitOfWork, role: str, account_id: str, lease_id: str) -> LeaseRow:
    """The lease if the account is its ``role`` (``buyer`` or ``seller``); else the 404 a
    missing lease gets."""
    row = await uow.leases.get(account_id, lease_id)
    party = None if row is None else (row.buyer_id if role == "buyer" else row.seller_id)
    if row is None or party != account_id:
        raise not_found("no such lease")
    return row


async def sold_by(uow: GatewayUnitOfWork, seller_id: str, lease_id: str) -> LeaseRow:
    """The lease if the account is its seller; else the 404 a missing lease gets (its buyer
    too). The routes ask it before the key's write scope, so only the seller hears of that."""
    return await _as(uow, "seller", seller_id, lease_id)


def _shown(uow: GatewayUnitOfWork, row: LeaseRow) -> LeaseStatus:
    return status_of(
        stored=row.status, interrupt_at=row.interrupt_at, started_at=row.started_at, now=uow.now
    )


def report_id(lease_id: str, kind: ReportKind) -> str:
    """The event id of a lease's report: one per lease and kind, whoever sends it."""
    return stable_id(lease_id, f"lease.{kind.value}_reported")


async def post_access(
    uow: GatewayUnitOfWork,
    cipher: AccessCipher,
    *,
    seller_id: str,
    lease_id: str,
    details: AccessDetails,
) -> AccessPosted:
    """Store the seller's details sealed (replacing earlier ones) and, while the view shows
    the lease provisioning, report it ready (once); 409 once it failed or ended."""
    row = await _as(uow, "seller", seller_id, lease_id)
    shown = _shown(uow, row)
    refused = access_refusal(shown)
    if refused is not None:
        raise ProblemError(409, f"lease-{refused.value}", "Lease over", f"the lease {refused}")
    sealed = cipher.seal(encode(details), associated=lease_id)
    await uow.lease_access.put(
        LeaseAccessRow(lease_id, row.buyer_id, seller_id, sealed, posted_at=uow.now)
    )
    reported = reports_ready(row.status) and await uow.lease_access.claim_report(
        lease_id, ReportKind.READY, uow.now
    )
    if reported:
        command = LeaseReadyReported(
            lease_id=lease_id, buyer_id=row.buyer_id, seller_id=seller_id, reported_at=uow.now
        )
        send(uow, BILLING_COMMANDS, row.buyer_id, command, report_id(lease_id, ReportKind.READY))
    return AccessPosted(
        lease_id=lease_id, posted_at=uow.now, lease_status=shown, ready_reported=reported
    )


async def report_failure(
    uow: GatewayUnitOfWork, *, seller_id: str, lease_id: str, detail: str
) -> FailureReported:
    """Report that the seller cannot deliver a provisioning lease (once; a repeat is answered
    the same and sends nothing); 409 unless the view shows it provisioning."""
    row = await _as(uow, "seller", seller_id, lease_id)
    if not may_report_failure(row.status):
        raise ProblemError(
            409,
            "lease-not-provisioning",
            "Lease not provisioning",
            f"only a provisioning lease can fail; this one is {_shown(uow, row)}",
        )
    if await uow.lease_access.claim_report(lease_id, ReportKind.FAILURE, uow.now):
        command = LeaseFailureReported(
            lease_id=lease_id,
            buyer_id=row.buyer_id,
            seller_id=seller_id,
            reported_at=uow.now,
            detail=detail,
        )
        send(uow, BILLING_COMMANDS, row.buyer_id, command, report_id(lease_id, ReportKind.FAILURE))
    return FailureReported(lease_id=lease_id, reported_at=uow.now)


async def get_access(
    uow: GatewayUnitOfWork, cipher: AccessCipher, *, buyer_id: str, lease_id: str
) -> AccessOut:
    """The details of a lease the account rents: 404 ``no-access`` while none were posted,
    410 ``access-erased`` after the retention; any other account's lease a plain 404."""
    await _as(uow, "buyer", buyer_id, lease_id)
    stored = await uow.lease_access.for_buyer(buyer_id, lease_id)
    if stored is None:
        raise ProblemError(404, NO_ACCESS, "No access yet", "the seller posted no access yet")
    if stored.sealed is None:
        raise ProblemError(
            410, ACCESS_ERASED, "Access erased", "the access details were erased after the end"
        )
    try:
        details = decode(cipher.open(stored.sealed, associated=lease_id))
    except (AccessUnreadable, AccessDecodeError) as exc:
        log.error("access details unreadable", extra={"lease_id": lease_id, "why": str(exc)})
        raise ProblemError(
            500, "access-unreadable", "Access unreadable", "the access details cannot be read"
        ) from None
    return AccessOut(lease_id=lease_id, posted_at=stored.posted_at, **details.as_dict())


async def erase_expired(uow: GatewayUnitOfWork, retention_s: int) -> int:
    """Erase the details of leases that ended or failed more than ``retention_s`` ago."""
    return await uow.lease_access.erase(
        ended_before=erasable_before(uow.now, retention_s), now=uow.now
    )
