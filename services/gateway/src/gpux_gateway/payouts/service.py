"""Payouts: a seller's request (a ``payout.requested`` command for billing, once per
Idempotency-Key), its list and its status, the admin's confirmation or rejection. What
billing's ``payout.status_changed`` makes of the stored payout is ``service.payouts`` (the
view consumer's).

The minimum is checked here too (``GPUX_PAYOUT_MINIMUM``, the same default as billing's), so a
request below it is a 422 rather than a payout billing rejects; whether the seller's payable
balance covers the amount only billing knows: the payout is ``pending_request`` until it says.
Every change is the seller's ``payout.updated`` account event.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpux_contracts.ids import new_id
from gpux_contracts.money import canonical, quantize, to_micros
from gpux_contracts.payouts import (
    PayoutConfirmRequested,
    PayoutMethod,
    PayoutRejectRequested,
    PayoutRequested,
    PayoutStatus,
    PayoutStatusChanged,
)
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.entrypoints.schemas import Page, amount, field_error, id_page
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.payouts.repository import PayoutRow
from gpux_gateway.payouts.schemas import NewPayout, PayoutDecisionAccepted, PayoutOut, payout_out
from gpux_gateway.service.access import found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError


def check_minimum(body: NewPayout, minimum: Decimal) -> None:
    """A 422 naming ``amount`` when it is below the minimum payout."""
    if body.amount < minimum:
        raise field_error(
            ("body", "amount"), f"a payout is at least {canonical(minimum)} {body.currency.value}"
        )


def _updated(row: PayoutRow) -> PayoutStatusChanged:
    """The stored payout as its ``payout.updated`` account event's data carries it."""
    return PayoutStatusChanged(
        payout_id=row.id,
        seller_id=row.seller_id,
        currency=row.currency,
        amount=amount(row.amount_micros),
        status=row.status,
        reason=None,
        reference=row.reference,
        changed_at=row.updated_at,
    )


async def _request(
    uow: GatewayUnitOfWork, seller_id: str, body: NewPayout, event_id: str
) -> PayoutRow:
    row = PayoutRow(
        id=new_id(),
        seller_id=seller_id,
        currency=body.currency,
        amount_micros=to_micros(quantize(body.amount)),
        method=PayoutMethod.MANUAL.value,
        destination=body.destination,
        status=PayoutStatus.PENDING_REQUEST,
        reason=None,
        reference="",
        created_at=uow.now,
        updated_at=uow.now,
    )
    await uow.payouts.add(row)
    command = PayoutRequested(
        payout_id=row.id,
        seller_id=seller_id,
        currency=row.currency,
        amount=amount(row.amount_micros),
        method=PayoutMethod.MANUAL,
        destination=row.destination,
        requested_at=uow.now,
    )
    send(uow, BILLING_COMMANDS, seller_id, command, event_id)
    data = _updated(row).model_dump(mode="json")
    event = AccountEvent.of(event_id, seller_id, AccountEventType.PAYOUT_UPDATED, data, uow.now)
    await uow.account_events.record(event)
    return row


async def request(
    uow: GatewayUnitOfWork, *, seller_id: str, body: NewPayout, once: Once
) -> Outcome:
    """Ask billing to pay the seller out, once per Idempotency-Key (202: pending_request)."""

    async def make() -> tuple[int, dict[str, Any]]:
        event_id = command_id(seller_id, once.key, "payout")
        row = await _request(uow, seller_id, body, event_id)
        return 202, payout_out(row).model_dump(mode="json")

    return await run_once(uow, once, make)


async def page(
    uow: GatewayUnitOfWork, seller_id: str, *, limit: int, cursor: str | None
) -> Page[PayoutOut]:
    """A page of the seller's payouts, in id order (oldest first)."""
    return id_page(await uow.payouts.page(seller_id, cursor, limit + 1), limit, payout_out)


async def get(uow: GatewayUnitOfWork, seller_id: str, payout_id: str) -> PayoutOut:
    """One of the seller's payouts; 404 for any other."""
    return payout_out(found(await uow.payouts.get(seller_id, payout_id), "payout"))


async def _undecided(uow: GatewayUnitOfWork, payout_id: str) -> PayoutRow:
    """A payout billing has not paid or rejected; 404 for none, 409 for a decided one."""
    row = found(await uow.payouts.find(payout_id), "payout")
    if row.status in (PayoutStatus.PAID, PayoutStatus.REJECTED):
        raise ProblemError(
            409, "payout-decided", "Payout decided", f"payout {payout_id} is {row.status.value}"
        )
    return row


def _send_decision(
    uow: GatewayUnitOfWork,
    row: PayoutRow,
    decision: str,
    command: PayoutConfirmRequested | PayoutRejectRequested,
) -> PayoutDecisionAccepted:
    """Send billing the admin's ``decision`` (``confirm`` or ``reject``) on the payout;
    the answer's status is ``<decision>_requested``."""
    # One command per payout and decision: deciding twice sends the same id, which billing
    # absorbs.
    event_id = command_id("admin", row.id, f"payout.{decision}")
    send(uow, BILLING_COMMANDS, row.seller_id, command, event_id)
    return PayoutDecisionAccepted(payout_id=row.id, status=f"{decision}_requested")


async def confirm(uow: GatewayUnitOfWork, payout_id: str, reference: str) -> PayoutDecisionAccepted:
    """Tell billing the admin made a payout's bank transfer (billing books it paid)."""
    row = await _undecided(uow, payout_id)
    command = PayoutConfirmRequested(
        payout_id=payout_id,
        seller_id=row.seller_id,
        confirmed_by="admin",
        reference=reference,
        requested_at=uow.now,
    )
    return _send_decision(uow, row, "confirm", command)


async def reject(uow: GatewayUnitOfWork, payout_id: str, reason: str) -> PayoutDecisionAccepted:
    """Tell billing the admin rejected a pending payout (its amount goes back to the seller)."""
    row = await _undecided(uow, payout_id)
    command = PayoutRejectRequested(
        payout_id=payout_id,
        seller_id=row.seller_id,
        rejected_by="admin",
        reason=reason,
        requested_at=uow.now,
    )
    return _send_decision(uow, row, "reject", command)
