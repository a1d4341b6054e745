"""Seller reliability from billing's counts (``billing.reliability``): each
``reliability.changed`` keeps its offer's and its seller's counts, unless those held counted
more (``gpux_contracts.reliability.supersedes``), for the offers' ``reliability``."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.reliability import ReliabilityChanged
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_changed(uow: GatewayUnitOfWork, event: Envelope[ReliabilityChanged]) -> None:
    """Keep the offer's and the seller's counts (written with the batch's at the commit)."""
    await uow.reliability.apply(event.payload)
