"""Sellers' offers as pricing and the book report them (``offers.status``)."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.offers import OfferStatusChanged
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_status_changed(uow: GatewayUnitOfWork, event: Envelope[OfferStatusChanged]) -> None:
    """Show the offer's status, reason and remaining GPUs as last reported."""
    await uow.offers.apply_status(event.payload, uow.now)
