"""Leases as billing reports them (``billing.leases``), for both parties' view.

A charge comes one by one (``lease.charged``: a trade's first hour, a stop, or a billing
configured ``per_lease``) or aggregated per batch of the settlement loop (``leases.settled``);
both carry the lease's running totals, applied the same way, so the views are the same. An
interruptible lease is told when it will be interrupted (``lease.interruption_notice``); when
it ends ``interrupted``, its order may be bought again (``service.rebuy``).
"""

from __future__ import annotations

from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.events import Envelope
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseEndReason,
    LeaseLowBalance,
    LeaseOpened,
)
from gpux_contracts.settlement import LeasesSettled
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service import rebuy
from gpux_gateway.service.account_events import tell
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_opened(uow: GatewayUnitOfWork, event: Envelope[LeaseOpened]) -> None:
    """Record what the lease is: from now on its parties see it, and both hear of it
    (``lease.opened``)."""
    await uow.leases.apply_opened(event.payload, uow.now)
    lease = event.payload
    await tell(uow, event, AccountEventType.LEASE_OPENED, lease.buyer_id, lease.seller_id)


async def on_charged(uow: GatewayUnitOfWork, event: Envelope[LeaseCharged]) -> None:
    """Take the charge's running totals (never those of an earlier period)."""
    await uow.leases.apply_charged(event.payload, uow.now)


async def on_settled(uow: GatewayUnitOfWork, event: Envelope[LeasesSettled]) -> None:
    """Take each settled lease's running totals, as its last ``lease.charged`` would."""
    await uow.leases.apply_settled(event.payload.leases, uow.now)


async def on_low_balance(uow: GatewayUnitOfWork, event: Envelope[LeaseLowBalance]) -> None:
    """Note when the buyer's funds first ran low for the lease; the buyer hears of it
    (``lease.low_balance``)."""
    await uow.leases.apply_low_balance(event.payload, uow.now)
    await tell(uow, event, AccountEventType.LEASE_LOW_BALANCE, event.payload.buyer_id)


async def on_interruption_noticed(
    uow: GatewayUnitOfWork, event: Envelope[LeaseInterruptionNoticed]
) -> None:
    """Show that the lease is interrupting: when it ends, why, and when that was decided; both
    parties hear of it (``lease.interruption_notice``)."""
    await uow.leases.apply_notice(event.payload, uow.now)
    notice = event.payload
    await tell(
        uow, event, AccountEventType.LEASE_INTERRUPTION_NOTICE, notice.buyer_id, notice.seller_id
    )


async def on_ended(uow: GatewayUnitOfWork, event: Envelope[LeaseEnded]) -> None:
    """End the lease for good with its final totals; an interrupted one's order may ask to be
    bought again. Both parties hear of it (``lease.ended``, whatever the reason, ``failed``
    included)."""
    await uow.leases.apply_ended(event.payload, uow.now)
    ended = event.payload
    await tell(uow, event, AccountEventType.LEASE_ENDED, ended.buyer_id, ended.seller_id)
    if event.payload.reason is LeaseEndReason.INTERRUPTED:
        await rebuy.after_interruption(uow, event.payload.lease_id)
