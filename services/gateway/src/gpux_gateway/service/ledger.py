"""Statement lines from billing's posted transfers (``billing.ledger``): one per
``ledger.posted``, or many per ``ledger.batch_posted`` of the settlement loop, each kept alike."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.leases import LedgerPosted
from gpux_contracts.settlement import LedgerBatchPosted
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_posted(uow: GatewayUnitOfWork, event: Envelope[LedgerPosted]) -> None:
    """Keep each line of the transfer on its owner's statement."""
    await uow.ledger.add_posted(event.payload)


async def on_batch_posted(uow: GatewayUnitOfWork, event: Envelope[LedgerBatchPosted]) -> None:
    """Keep each line of each transfer of the batch, as its own ``ledger.posted`` would."""
    for posted in event.payload.transfers:
        await uow.ledger.add_posted(posted)
