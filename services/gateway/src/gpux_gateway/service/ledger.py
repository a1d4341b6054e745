"""Statement lines from billing's posted transfers (``billing.ledger``)."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.leases import LedgerPosted
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_posted(uow: GatewayUnitOfWork, event: Envelope[LedgerPosted]) -> None:
    """Keep each line of the transfer on its owner's statement."""
    await uow.ledger.add_posted(event.payload)
