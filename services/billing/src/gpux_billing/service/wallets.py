"""Wallets: admin credits and top-ups (billing.commands), booked once on the ledger.

A credit or a booked top-up moves money from top-up clearing to the wallet's available
balance under a transfer id of its own (``credit:<id>``, ``topup:<id>``) at the command's
time, so a command handled again posts nothing new.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_billing.domain import topups, transfers
from gpux_billing.domain.topups import Topup
from gpux_billing.service.ledger import announce, post
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.billing import CreditRequested, TopupConfirmRequested, TopupRequested
from gpux_contracts.events import Envelope
from gpux_contracts.money import quantize, to_micros


async def _book(uow: BillingUnitOfWork, topup: Topup, at: datetime, cause: Envelope[Any]) -> None:
    if topup.account_id is None or topup.currency is None or topup.amount_micros is None:
        return  # only a confirmation so far: its request books it when it comes
    transfer = transfers.topup(
        f"topup:{topup.id}",
        topup.account_id,
        topup.currency,
        topup.amount_micros,
        at,
        reference=f"top-up {topup.id} ({topup.provider})",
    )
    await post(uow, [transfer], cause)
    await uow.wallets.set_status(topup.id, topups.BOOKED, None, at)
    await announce(uow, {(topup.account_id, topup.currency): cause})


async def on_topup_requested(uow: BillingUnitOfWork, event: Envelope[TopupRequested]) -> None:
    """Record a top-up; the dev provider (when enabled) or an earlier confirmation books it."""
    request = event.payload
    at = event.occurred_at
    requested = Topup(
        request.topup_id,
        request.account_id,
        request.currency,
        to_micros(quantize(request.amount)),
        request.provider,
        topups.REQUESTED,
        confirmed=False,
    )
    topup = await uow.wallets.record_request(requested, at)
    if topup.status != topups.REQUESTED or topup.account_id != request.account_id:
        return  # already booked or refused, or the id belongs to another account
    if topups.provider_refused(request.provider, uow.rules.dev_topups):
        await uow.wallets.set_status(topup.id, topups.REJECTED, topups.PROVIDER_DISABLED, at)
        return
    if topups.books_now(request.provider, topup.confirmed):
        await _book(uow, topup, at, event)
    # else manual: waits for the admin's confirmation


async def on_topup_confirm_requested(
    uow: BillingUnitOfWork, event: Envelope[TopupConfirmRequested]
) -> None:
    """Book a manual top-up the admin confirmed (or remember the confirmation until it comes)."""
    at = event.occurred_at
    topup = await uow.wallets.record_confirmation(event.payload.topup_id, at)
    if topup.status != topups.REQUESTED or topup.account_id is None:
        return
    if topup.provider not in topups.PROVIDERS:
        return
    await _book(uow, topup, at, event)


async def on_credit_requested(uow: BillingUnitOfWork, event: Envelope[CreditRequested]) -> None:
    """Book an admin credit: like a top-up, from top-up clearing to the wallet."""
    credit = event.payload
    at = event.occurred_at
    transfer = transfers.topup(
        f"credit:{credit.credit_id}",
        credit.account_id,
        credit.currency,
        to_micros(quantize(credit.amount)),
        at,
        reference=f"credit by {credit.requested_by}: {credit.reference}"[:200],
    )
    await post(uow, [transfer], event)
    await announce(uow, {(credit.account_id, credit.currency): event})
