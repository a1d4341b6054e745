"""Leases as billing reports them (``billing.leases``), for both parties' view."""

from __future__ import annotations

from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseCharged, LeaseEnded, LeaseLowBalance, LeaseOpened
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_opened(uow: GatewayUnitOfWork, event: Envelope[LeaseOpened]) -> None:
    """Record what the lease is: from now on its parties see it."""
    await uow.leases.apply_opened(event.payload, uow.now)


async def on_charged(uow: GatewayUnitOfWork, event: Envelope[LeaseCharged]) -> None:
    """Take the charge's running totals (never those of an earlier period)."""
    await uow.leases.apply_charged(event.payload, uow.now)


async def on_low_balance(uow: GatewayUnitOfWork, event: Envelope[LeaseLowBalance]) -> None:
    """Note when the buyer's funds first ran low for the lease."""
    await uow.leases.apply_low_balance(event.payload, uow.now)


async def on_ended(uow: GatewayUnitOfWork, event: Envelope[LeaseEnded]) -> None:
    """End the lease for good with its final totals."""
    await uow.leases.apply_ended(event.payload, uow.now)
