"""Sellers' offers as pricing and the book report them (``offers.status``), and the changes
pricing accepted (``pricing.offers``)."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.offers import OfferAccepted, OfferStatusChanged, OfferWithdrawn
from gpux_gateway.domain.offers import FIRST_REVISION
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.account_events import tell
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_status_changed(uow: GatewayUnitOfWork, event: Envelope[OfferStatusChanged]) -> None:
    """Show the offer's status, reason and free GPUs (with the book's capacity and leased
    GPUs), unless the report would undo a newer state (``domain.offers.after_report``): an
    exhausted offer is live again when the book says so. The seller hears of it
    (``offer.updated``)."""
    await uow.offers.apply_status(event.payload, uow.now)
    await tell(uow, event, AccountEventType.OFFER_UPDATED, event.payload.seller_id)


async def on_accepted(uow: GatewayUnitOfWork, event: Envelope[OfferAccepted]) -> None:
    """Show the prices and GPUs of a change pricing accepted (a re-price, a resize) once it
    is accepted: the seller reads what it changed as soon as pricing confirmed it."""
    if event.payload.revision > FIRST_REVISION:  # the first is the offer as submitted: shown
        await uow.offers.apply_accepted(event.payload, uow.now)


async def on_withdrawn(uow: GatewayUnitOfWork, event: Envelope[OfferWithdrawn]) -> None:
    """Nothing to show yet: the book confirms a withdrawal with a status (``withdrawn``)."""
