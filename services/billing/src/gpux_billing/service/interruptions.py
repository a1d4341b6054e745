"""Interruptions: the book's ``lease.interruption_requested`` (billing.commands) sets a running
interruptible lease's ``interrupt_at`` and announces ``lease.interruption_notice``, once.

The lease is locked first, like a stopped lease (``service.locking``). Its interruption is
written on its row with the rest of its state, which makes it due at ``interrupt_at`` at the
latest; the settlement loop then ends it there with ``interrupted``, exactly as a stop at
that instant would (``domain.leases.settle``). What ``domain.interruptions.verdict`` refuses
is logged and changes nothing.

A lease billing does not know yet is one whose trade (market.trades, another consumer) has
not been applied: the request is given back (``RetryLater``) while there is time for it to
come, ``UNKNOWN_WAIT`` after the book decided and before ``interrupt_at``, then logged and
dropped (a trade billing never applies opens no lease to interrupt), so a lost trade cannot
hold its partition of billing.commands for long.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from gpux_billing.domain.interruptions import Verdict, interrupt, notice_seconds, verdict
from gpux_billing.domain.leases import Interruption, Lease
from gpux_billing.service.settlement import lease_event
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.capacity import LeaseInterruptionNoticed, LeaseInterruptionRequested
from gpux_contracts.events import Envelope
from gpux_platform.batches import RetryLater

log = logging.getLogger("gpux.billing.interruptions")

UNKNOWN_WAIT = timedelta(seconds=60)
"""How long after the book decided an interruption waits for its lease's trade."""

_LEVEL = {
    Verdict.NOT_THE_BUYERS: logging.WARNING,
    Verdict.ENDED: logging.INFO,
    Verdict.INTERRUPTING: logging.INFO,
    Verdict.ON_DEMAND: logging.WARNING,
}


class LeaseNotOpenedYet(RetryLater):
    """An interruption of a lease whose trade billing has not applied yet."""


def _noticed(lease: Lease, interruption: Interruption) -> LeaseInterruptionNoticed:
    return LeaseInterruptionNoticed(
        lease_id=lease.id,
        buyer_id=lease.terms.buyer_id,
        seller_id=lease.terms.seller_id,
        offer_id=lease.offer_id,
        cause=interruption.cause,
        noticed_at=interruption.noticed_at,
        interrupt_at=interruption.at,
        notice_seconds=notice_seconds(interruption),
    )


async def on_interruption_requested(
    uow: BillingUnitOfWork, event: Envelope[LeaseInterruptionRequested]
) -> None:
    """Interrupt a running interruptible lease at the book's ``interrupt_at``, once."""
    request = event.payload
    lease = await uow.leases.get(request.lease_id)
    if lease is None:
        if uow.now < min(request.interrupt_at, request.noticed_at + UNKNOWN_WAIT):
            raise LeaseNotOpenedYet(f"lease {request.lease_id} is not open yet")
        log.warning(
            "interruption of an unknown lease dropped",
            extra={"lease_id": request.lease_id, "event_id": event.event_id},
        )
        return
    found = verdict(lease, request.buyer_id)
    if found is not Verdict.INTERRUPT:
        log.log(
            _LEVEL[found],
            "interruption ignored: %s",
            found.value,
            extra={"lease_id": lease.id, "event_id": event.event_id},
        )
        return
    if request.gpus != lease.gpus:
        log.warning(
            "interruption names %d GPUs, the lease has %d: the whole lease is interrupted",
            request.gpus,
            lease.gpus,
            extra={"lease_id": lease.id},
        )
    interruption = Interruption(request.interrupt_at, request.cause, request.noticed_at)
    await uow.leases.save([(lease.terms, interrupt(lease.state, interruption))])
    notice = _noticed(lease, interruption)
    uow.outbox.add(lease_event(lease.terms, notice, "interruption_notice", event, uow.now))
