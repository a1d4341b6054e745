"""Leases as their parties see them, their interruption, the buyer's stop and the seller's
reclaim, statements and earnings.

Everything here is read from billing's events (``billing.leases``, ``billing.ledger``), so a
change shows once the gateway has read it; the stop is a command on ``billing.commands``, the
reclaim one on ``capacity.commands`` (for the book, which decides the interruption).
"""

from __future__ import annotations

from typing import Any

from gpux_contracts.capacity import LeaseReclaimRequested
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.topics import BILLING_COMMANDS, CAPACITY_COMMANDS
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.domain.leases import STORED_FINAL, ReclaimRefusal, reclaim_refusal
from gpux_gateway.entrypoints.schemas import split_page
from gpux_gateway.leases.repository import LeaseFilter, LeaseRow
from gpux_gateway.leases.schemas import (
    EarningsList,
    InterruptionOut,
    LeaseOut,
    LeasePage,
    LedgerPage,
    StopAccepted,
    earnings_out,
    interruption_out,
    lease_out,
    line_out,
)
from gpux_gateway.service.access import found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError

NO_INTERRUPTION = "no-interruption"
"""The problem type of ``GET /v1/leases/{id}/interruption`` while none is pending (the lease
exists and is the caller's: not the plain ``not-found``)."""

RECLAIM_REFUSED = {
    ReclaimRefusal.ENDED: "the lease already ended",
    ReclaimRefusal.NOT_INTERRUPTIBLE: "only an interruptible lease can be reclaimed",
    ReclaimRefusal.INTERRUPTING: "the lease is being interrupted already",
}
"""What each refused reclaim's problem says."""


async def page(
    uow: GatewayUnitOfWork, which: LeaseFilter, *, limit: int, cursor: str | None
) -> LeasePage:
    """A page of the leases the account rents or provides (``which`` narrows it), in id order."""
    found = await uow.leases.page(which, after=cursor, limit=limit + 1, now=uow.now)
    rows, more = split_page(found, limit)
    items = [lease_out(r, uow.now) for r in rows]
    return LeasePage(items=items, next_cursor=items[-1].lease_id if more else None)


async def _party_to(uow: GatewayUnitOfWork, account_id: str, lease_id: str) -> LeaseRow:
    return found(await uow.leases.get(account_id, lease_id), "lease")


def _only_the(role: str, party_id: str | None, account_id: str, verb: str) -> None:
    """A 403 problem unless the caller is the lease's ``role`` (the other party may read the
    lease, not ``verb`` it)."""
    if party_id != account_id:
        raise ProblemError(
            403, f"lease-{role}-only", "Forbidden", f"only the lease's {role} may {verb} it"
        )


async def get(uow: GatewayUnitOfWork, account_id: str, lease_id: str) -> LeaseOut:
    """One lease the account rents or provides; 404 for any other."""
    return lease_out(await _party_to(uow, account_id, lease_id), uow.now)


async def interruption(uow: GatewayUnitOfWork, account_id: str, lease_id: str) -> InterruptionOut:
    """The interruption of a lease the account rents or provides, once its notice was read;
    a 404 of its own kind (``no-interruption``) while none is, another account's lease a
    plain 404."""
    row = await _party_to(uow, account_id, lease_id)
    pending = interruption_out(row, uow.now)
    if pending is None:
        raise ProblemError(
            404, NO_INTERRUPTION, "No interruption", "no interruption of this lease is pending"
        )
    return pending


async def reclaim(uow: GatewayUnitOfWork, *, seller_id: str, lease_id: str, once: Once) -> Outcome:
    """Ask the book for the GPUs of an interruptible lease of the seller's offer back, once
    per Idempotency-Key; answers the lease as it stands (the notice follows from billing)."""
    event_id = command_id(seller_id, once.key, f"lease.reclaim:{lease_id}")

    async def make() -> tuple[int, dict[str, Any]]:
        row = await _party_to(uow, seller_id, lease_id)
        _only_the("seller", row.seller_id, seller_id, "reclaim")
        shown = lease_out(row, uow.now)
        refusal = reclaim_refusal(tier=row.tier, status=shown.status)
        if refusal is not None:
            raise ProblemError(409, refusal.value, "Cannot reclaim", RECLAIM_REFUSED[refusal])
        assert row.offer_id is not None
        assert row.gpu is not None
        command = LeaseReclaimRequested(
            lease_id=lease_id,
            buyer_id=row.buyer_id,
            offer_id=row.offer_id,
            seller_id=seller_id,
            gpu=row.gpu,
            requested_at=uow.now,
        )
        send(uow, CAPACITY_COMMANDS, row.gpu, command, event_id)
        return 202, shown.model_dump(mode="json")

    return await run_once(uow, once, make)


async def stop(uow: GatewayUnitOfWork, *, buyer_id: str, lease_id: str, once: Once) -> Outcome:
    """Ask billing to end a running lease now, once per Idempotency-Key (its buyer only)."""
    event_id = command_id(buyer_id, once.key, f"lease.stop:{lease_id}")

    async def make() -> tuple[int, dict[str, Any]]:
        row = await _party_to(uow, buyer_id, lease_id)
        _only_the("buyer", row.buyer_id, buyer_id, "stop")
        if row.status in STORED_FINAL:
            raise ProblemError(409, "lease-ended", "Lease ended", f"the lease is {row.status}")
        command = LeaseStopRequested(lease_id=lease_id, buyer_id=buyer_id, requested_at=uow.now)
        send(uow, BILLING_COMMANDS, buyer_id, command, event_id)
        accepted = StopAccepted(lease_id=lease_id, requested_at=uow.now)
        return 202, accepted.model_dump(mode="json")

    return await run_once(uow, once, make)


async def statement(
    uow: GatewayUnitOfWork,
    account_id: str,
    *,
    currency: str | None,
    limit: int,
    cursor: str | None,
) -> LedgerPage:
    """A page of the account's statement lines, newest first."""
    before = None if cursor is None else int(cursor)
    found = await uow.ledger.page(account_id, currency=currency, before=before, limit=limit + 1)
    rows, more = split_page(found, limit)
    return LedgerPage(
        items=[line_out(r) for r in rows], next_cursor=str(rows[-1].seq) if more else None
    )


async def earnings(uow: GatewayUnitOfWork, seller_id: str) -> EarningsList:
    """What the seller's leases earned, per offer currency."""
    return EarningsList(items=[earnings_out(e) for e in await uow.leases.earnings(seller_id)])
