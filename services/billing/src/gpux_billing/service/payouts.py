"""Seller payouts (billing.commands): requests, the admin's confirmation or rejection.

A request is decided once per payout id (``domain.payouts.refusal``): paid out (``payout:<id>``,
the seller's payable to its payouts in transit, then the payment adapter of its method is
asked to send the money) and ``pending``, or ``rejected`` with its reason and nothing moved.
A confirmation of a pending payout books it ``paid`` (``payout-paid:<id>``), an admin's
rejection moves it back (``payout-returned:<id>``). Each decision announces
``payout.status_changed`` on ``billing.payouts`` (key: the seller), a ``ledger.posted`` per
transfer (the seller's statement) and the seller's ``balance.changed``, in one transaction
with the payout row; a command handled again finds the payout decided and changes nothing.

**Payment adapters.** ``PayoutAdapter.submit(payout)`` hands a payout to whatever moves the
money and returns its reference. The one method, ``manual``, is a bank transfer an operator
makes by hand: ``ManualPayoutAdapter`` does nothing and returns ``"manual"``; the admin's
``POST /v1/admin/payouts/{id}/confirm`` completes it. A real provider plugs in as another
``PayoutMethod`` in ``ADAPTERS``: its ``submit`` must be idempotent on the payout id (a
redelivered request calls it again only if the first unit did not commit), should only
enqueue (it runs inside the unit's transaction; a provider call belongs in an outbox-driven
loop), and its provider's settlement webhook sends ``payout.confirm_requested`` (or
``payout.reject_requested``) in place of the admin.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from gpux_billing.domain import payouts
from gpux_billing.domain.ledger import InsufficientFunds, Transfer
from gpux_billing.domain.payouts import Payout
from gpux_billing.service.events import outgoing
from gpux_billing.service.ledger import announce, money, post
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.money import quantize, to_micros
from gpux_contracts.payouts import (
    PayoutConfirmRequested,
    PayoutDecision,
    PayoutMethod,
    PayoutRejection,
    PayoutRejectRequested,
    PayoutRequested,
    PayoutStatus,
    PayoutStatusChanged,
)
from gpux_contracts.topics import BILLING_PAYOUTS

log = logging.getLogger("gpux.billing.payouts")

D = TypeVar("D", bound=PayoutDecision)

Decide = Callable[[Payout, D], tuple[Payout, Transfer]]
"""What an admin's decision makes of a pending payout, and the transfer that books it."""


class PayoutAdapter(Protocol):
    """What sends a pending payout's money (a bank, a payment provider)."""

    async def submit(self, payout: Payout) -> str:
        """Hand the payout over; its reference (idempotent on the payout id)."""
        ...


class ManualPayoutAdapter:
    """A bank transfer made by hand: nothing to call; the admin's confirmation completes it."""

    async def submit(self, payout: Payout) -> str:
        """Nothing is sent from here; the reference says so."""
        return PayoutMethod.MANUAL.value


ADAPTERS: Mapping[PayoutMethod, PayoutAdapter] = {PayoutMethod.MANUAL: ManualPayoutAdapter()}
"""The payment adapter of each payout method."""


def status_changed(uow: BillingUnitOfWork, payout: Payout, cause: Envelope[Any]) -> None:
    """Queue the payout's ``payout.status_changed`` (once per payout and status)."""
    payload = PayoutStatusChanged(
        payout_id=payout.id,
        seller_id=payout.seller_id,
        currency=payout.currency,
        amount=money(payout.amount_micros),
        status=payout.status,
        reason=payout.reason,
        reference=payout.reference,
        changed_at=payout.updated_at,
    )
    event_id = stable_id("payout", payout.id, payout.status.value)
    uow.outbox.add(
        outgoing(
            BILLING_PAYOUTS, payout.seller_id, payload, cause=cause, event_id=event_id, now=uow.now
        )
    )


async def _decide(uow: BillingUnitOfWork, payout: Payout, cause: Envelope[Any]) -> Payout:
    """The requested payout, pending (its transfer posted) or rejected (nothing posted)."""
    balance = await uow.ledger.balance(payouts.payable_account(payout.seller_id, payout.currency))
    reason = payouts.refusal(payout.amount_micros, uow.rules.payout_minimum_micros, balance)
    if reason is not None:
        return replace(payout, status=PayoutStatus.REJECTED, reason=reason)
    try:
        await post(uow, [payouts.requested_transfer(payout)], cause, isolated=True)
    except InsufficientFunds:  # one seller's commands are serial: only a bug gets here
        reason = PayoutRejection.INSUFFICIENT_SELLER_PAYABLE
        return replace(payout, status=PayoutStatus.REJECTED, reason=reason)
    reference = await ADAPTERS[payout.method].submit(payout)
    return replace(payout, reference=reference)


async def on_payout_requested(uow: BillingUnitOfWork, event: Envelope[PayoutRequested]) -> None:
    """Decide a seller's payout request, once per payout id."""
    request = event.payload
    if await uow.payouts.get(request.payout_id) is not None:
        return  # decided already (the same payout id sent again)
    at = request.requested_at
    requested = Payout(
        id=request.payout_id,
        seller_id=request.seller_id,
        currency=request.currency,
        amount_micros=to_micros(quantize(request.amount)),
        method=request.method,
        destination=request.destination,
        status=PayoutStatus.PENDING,
        requested_at=at,
        updated_at=at,
    )
    decided = await _decide(uow, requested, event)
    await uow.payouts.add(decided)
    status_changed(uow, decided, event)
    if decided.status is PayoutStatus.PENDING:
        await announce(uow, {(decided.seller_id, decided.currency): event})


async def _pending(uow: BillingUnitOfWork, payout_id: str, seller_id: str) -> Payout | None:
    """The seller's pending payout of this id, or None (logged: decided already, or unknown)."""
    payout = await uow.payouts.get(payout_id)
    if payout is None or payout.seller_id != seller_id:
        log.warning("payout %s of seller %s is unknown: nothing to do", payout_id, seller_id)
        return None
    if payout.status is not PayoutStatus.PENDING:
        log.info("payout %s is %s already: nothing to do", payout_id, payout.status.value)
        return None
    return payout


def _deciding(decide: Decide[D]) -> Callable[[BillingUnitOfWork, Envelope[D]], Awaitable[None]]:
    """An admin's decision's handler: on the seller's pending payout of its id (else nothing),
    the payout ``decide`` makes of it saved, its transfer posted, the change announced."""

    async def handler(uow: BillingUnitOfWork, event: Envelope[D]) -> None:
        decision = event.payload
        payout = await _pending(uow, decision.payout_id, decision.seller_id)
        if payout is None:
            return
        decided, transfer = decide(payout, decision)
        await post(uow, [transfer], event)
        await uow.payouts.save(decided)
        status_changed(uow, decided, event)
        await announce(uow, {(decided.seller_id, decided.currency): event})

    # Named as the decision (its handler's signature is ``(uow, event)``, not ``decide``'s).
    handler.__name__, handler.__qualname__ = decide.__name__, decide.__qualname__
    handler.__doc__ = decide.__doc__
    return handler


@_deciding
def on_payout_confirm_requested(
    payout: Payout, confirm: PayoutConfirmRequested
) -> tuple[Payout, Transfer]:
    """Book a pending payout paid: its payouts in transit to the platform's paid out."""
    reference = confirm.reference or payout.reference
    paid = replace(
        payout,
        status=PayoutStatus.PAID,
        reference=reference,
        decided_by=confirm.confirmed_by,
        updated_at=confirm.requested_at,
    )
    return paid, payouts.paid_transfer(payout, confirm.requested_at, confirm.reference)


@_deciding
def on_payout_reject_requested(
    payout: Payout, reject: PayoutRejectRequested
) -> tuple[Payout, Transfer]:
    """Reject a pending payout: its amount back from payouts in transit to seller payable."""
    rejected = replace(
        payout,
        status=PayoutStatus.REJECTED,
        reason=PayoutRejection.REJECTED_BY_ADMIN,
        decided_by=reject.rejected_by,
        updated_at=reject.requested_at,
    )
    return rejected, payouts.returned_transfer(payout, reject.requested_at)
