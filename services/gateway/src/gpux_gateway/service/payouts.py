"""Sellers' payouts from billing's decisions (``billing.payouts``): each
``payout.status_changed`` moves the stored payout on (never back, ``payouts.repository.RANK``)
and is the seller's ``payout.updated`` account event."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.payouts import PayoutStatusChanged
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.account_events import tell
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_status_changed(uow: GatewayUnitOfWork, event: Envelope[PayoutStatusChanged]) -> None:
    """Apply billing's decision to the payout; the seller hears of it (``payout.updated``)."""
    await uow.payouts.apply(event.payload)
    await tell(uow, event, AccountEventType.PAYOUT_UPDATED, event.payload.seller_id)
