"""Interruptions: the book's ``lease.interruption_requested`` (billing.commands) sets a running
interruptible lease's ``interrupt_at`` and announces ``lease.interruption_notice``, once.

The lease is locked first, like a stopped lease (``service.locking``). Its interruption is
written on its row with the rest of its state, which makes it due at ``interrupt_at`` at the
latest; the settlement loop then ends it there with ``interrupted``, exactly as a stop at
that instant would (``domain.leases.settle``). A reclaim, the seller's doing, counts against
the seller's reliability (``service.reliability``) as it takes; a preemption does not. What
``domain.interruptions.verdict`` refuses is logged and changes nothing.

A lease billing does not know yet is one whose trade (market.trades, another consumer) has
not been applied. The interruption is never dropped: it is kept for the lease's id (the
first one stands) and the command acknowledged; the trade that opens the lease takes it
(``opening``), so the lease opens with its ``interrupt_at`` set and its notice goes out
then, and a lease whose ``interrupt_at`` has passed by then ends there as it opens. Both
sides lock the lease's id first (``service.locking``), so neither misses the other.

An interruption that arrives after a per-second lease was charged past its ``interrupt_at``
(billing.commands lagging more than the notice and a settlement period) ends the lease at
its last settled instant: charged time is not taken back. That is logged as a warning and
counted (``gpux_billing_late_interruptions_total``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from prometheus_client import Counter

from gpux_billing.domain import reliability as outcomes
from gpux_billing.domain.interruptions import Pending, Verdict, interrupt, notice_seconds, verdict
from gpux_billing.domain.leases import Interruption, Lease
from gpux_billing.service.reliability import stage
from gpux_billing.service.settlement import lease_event
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_billing.service.unopened import kept_until_opened, log_kept
from gpux_contracts.capacity import LeaseInterruptionNoticed, LeaseInterruptionRequested
from gpux_contracts.events import Envelope
from gpux_contracts.offers import BillingGranularity
from gpux_platform.broker import Outgoing

log = logging.getLogger("gpux.billing.interruptions")

LATE_INTERRUPTIONS = Counter(
    "gpux_billing_late_interruptions_total",
    "Interruptions that reached billing after their per-second lease was charged past"
    " interrupt_at (the lease ends at its last settled instant, billed past interrupt_at).",
)

_LEVEL = {
    Verdict.NOT_THE_BUYERS: logging.WARNING,
    Verdict.ENDED: logging.INFO,
    Verdict.INTERRUPTING: logging.INFO,
    Verdict.ON_DEMAND: logging.WARNING,
}


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


def _takes(lease: Lease, buyer_id: str, event_id: str) -> bool:
    """Whether an interruption of ``lease`` for ``buyer_id`` takes (else it is logged)."""
    found = verdict(lease, buyer_id)
    if found is not Verdict.INTERRUPT:
        log.log(
            _LEVEL[found],
            "interruption ignored: %s",
            found.value,
            extra={"lease_id": lease.id, "event_id": event_id},
        )
    return found is Verdict.INTERRUPT


def _warn_if_late(lease: Lease, interruption: Interruption) -> None:
    """Warn and count when a per-second lease was charged past ``interrupt_at`` already."""
    through = lease.state.charged_through
    if lease.terms.billing is BillingGranularity.SECOND and through and through > interruption.at:
        LATE_INTERRUPTIONS.inc()
        log.warning(
            "interruption after its lease was charged past interrupt_at: it ends at its last"
            " settled instant",
            extra={"lease_id": lease.id, "interrupt_at": interruption.at.isoformat()},
        )


async def _keep(uow: BillingUnitOfWork, event: Envelope[LeaseInterruptionRequested]) -> None:
    """Keep the interruption of a lease not opened yet for its trade (the first one stands)."""
    request = event.payload
    interruption = Interruption(request.interrupt_at, request.cause, request.noticed_at)
    pending = Pending(
        request.lease_id, request.buyer_id, request.offer_id, request.seller_id, interruption
    )
    log_kept(log, "interruption", await uow.pending_interruptions.keep(pending), event)


@kept_until_opened(_keep)
async def on_interruption_requested(
    uow: BillingUnitOfWork, lease: Lease, event: Envelope[LeaseInterruptionRequested]
) -> None:
    """Interrupt a running interruptible lease at the book's ``interrupt_at``, once (a lease
    not opened yet: when its trade opens it)."""
    request = event.payload
    if not _takes(lease, request.buyer_id, event.event_id):
        return
    if request.gpus != lease.gpus:
        log.warning(
            "interruption names %d GPUs, the lease has %d: the whole lease is interrupted",
            request.gpus,
            lease.gpus,
            extra={"lease_id": lease.id},
        )
    interruption = Interruption(request.interrupt_at, request.cause, request.noticed_at)
    _warn_if_late(lease, interruption)
    await uow.leases.save([(lease.terms, interrupt(lease.state, interruption))])
    notice = _noticed(lease, interruption)
    uow.outbox.add(lease_event(lease.terms, notice, "interruption_notice", event, uow.now))
    stage(uow, [outcomes.interrupted(lease, interruption)], event)


def opening(
    uow: BillingUnitOfWork, lease: Lease, pending: Pending | None, cause: Envelope[Any]
) -> tuple[Lease, Outgoing | None]:
    """A new lease with the interruption kept for it (if any takes), and its notice, in the
    trace of the trade that opens it (a reclaim counts for the seller's reliability then)."""
    if pending is None or not _takes(lease, pending.buyer_id, cause.event_id):
        return lease, None
    stage(uow, [outcomes.interrupted(lease, pending.interruption)], cause)
    interrupted = replace(lease, state=interrupt(lease.state, pending.interruption))
    notice = _noticed(lease, pending.interruption)
    return interrupted, lease_event(lease.terms, notice, "interruption_notice", cause, uow.now)
