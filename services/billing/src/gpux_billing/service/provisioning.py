"""Provisioning: the seller's ``lease.ready_reported`` and ``lease.failure_reported``
(billing.commands, key: buyer id) end a lease's provisioning.

A ready report makes a provisioning lease ready at ``ready_at`` (``domain.provisioning``):
its row is written with its new start (and fixed end), ``lease.ready`` goes out (its id stable
per lease: once) and it counts as ready in time for its seller (``service.reliability``);
then it is settled up to the report as any lease is, so an hourly lease pays its first hour at
``ready_at`` at once and a per-second one is charged from ``ready_at`` by the settlement
loop. A failure report ends it ``failed`` through ``settlement.settle`` (nothing
charged, the whole prepayment released, ``lease.ended`` and ``lease.released`` in the same
unit). What ``domain.provisioning.verdict`` refuses is logged and changes nothing: a report
for a lease that is not provisioning (a replay, the other report or the deadline came first)
or that names other parties. A ready report at or after the deadline ends the lease as the
settlement loop would have (``failed``, ``provisioning_timeout``).

A report for a lease billing has not opened yet (its trade on market.trades, another
consumer, may lag) is kept for the lease's id (the first one stands) and the command is
acknowledged; the trade that opens the lease takes it (``opening``). The batch locks the
lease id first (``service.locking``), as a trade's does, so neither misses the other.
"""

from __future__ import annotations

import logging
from typing import Any

from gpux_billing.domain import reliability as outcomes
from gpux_billing.domain.leases import Failed, Lease
from gpux_billing.domain.provisioning import PendingReport, ReportKind, Verdict, ready, verdict
from gpux_billing.service.reliability import stage
from gpux_billing.service.settlement import lease_event, settle
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_billing.service.unopened import kept_until_opened, log_kept
from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseFailureReported, LeaseReady, LeaseReadyReported
from gpux_platform.broker import Outgoing

log = logging.getLogger("gpux.billing.provisioning")

Report = LeaseReadyReported | LeaseFailureReported

_LEVEL = {
    Verdict.NOT_THE_PARTIES: logging.WARNING,
    Verdict.NOT_PROVISIONING: logging.INFO,
    Verdict.LATE: logging.INFO,
}


def _kind(report: Report) -> ReportKind:
    return ReportKind.READY if isinstance(report, LeaseReadyReported) else ReportKind.FAILED


def _verdict(lease: Lease, report: PendingReport, event_id: str) -> Verdict:
    """What a report does to ``lease`` (logged unless it takes)."""
    found = verdict(lease, report.buyer_id, report.seller_id, report.kind, report.reported_at)
    if found is not Verdict.TAKES:
        log.log(
            _LEVEL[found],
            "%s report ignored: %s",
            report.kind.value,
            found.value,
            extra={"lease_id": lease.id, "event_id": event_id},
        )
    return found


def _pending(report: Report) -> PendingReport:
    detail = report.detail if isinstance(report, LeaseFailureReported) else ""
    kind = _kind(report)
    return PendingReport(
        report.lease_id, report.buyer_id, report.seller_id, kind, report.reported_at, detail
    )


def _ready_event(uow: BillingUnitOfWork, lease: Lease, cause: Envelope[Any] | None) -> Outgoing:
    """The ``lease.ready`` of a lease made ready (its id stable per lease)."""
    terms = lease.terms
    payload = LeaseReady(
        lease_id=lease.id,
        buyer_id=terms.buyer_id,
        seller_id=terms.seller_id,
        ready_at=terms.started_at,
        ends_at=terms.ends_at,
    )
    return lease_event(terms, payload, "ready", cause, uow.now)


async def _keep(uow: BillingUnitOfWork, event: Envelope[Any]) -> None:
    """Keep the report of a lease not opened yet for its trade (the first one stands)."""
    report = _pending(event.payload)
    kept = await uow.pending_reports.keep(report)
    log_kept(log, f"{report.kind.value} report", kept, event)


@kept_until_opened(_keep)
async def on_ready_reported(
    uow: BillingUnitOfWork, lease: Lease, event: Envelope[LeaseReadyReported]
) -> None:
    """Make a provisioning lease ready and charge it from ``ready_at`` (a lease not opened
    yet: when its trade opens it)."""
    report = event.payload
    found = _verdict(lease, _pending(report), event.event_id)
    until = max(uow.now, report.reported_at)
    if found is Verdict.LATE:  # the deadline (or interruption) came first: it ends there
        await settle(uow, [lease], until, event)
    if found is not Verdict.TAKES:
        return
    made = ready(lease, report.reported_at)
    await uow.leases.save([(made.terms, made.state)])
    uow.outbox.add(_ready_event(uow, made, event))
    stage(uow, [outcomes.ready_in_time(made)], event)
    await settle(uow, [made], until, event)


@kept_until_opened(_keep)
async def on_failure_reported(
    uow: BillingUnitOfWork, lease: Lease, event: Envelope[LeaseFailureReported]
) -> None:
    """End a provisioning lease ``failed``: nothing charged, its prepayment released (a lease
    not opened yet: when its trade opens it)."""
    report = event.payload
    if _verdict(lease, _pending(report), event.event_id) is not Verdict.TAKES:
        return
    failures = {lease.id: Failed(report.reported_at, report.detail)}
    await settle(uow, [lease], max(uow.now, report.reported_at), event, failures=failures)


def opening(
    uow: BillingUnitOfWork,
    lease: Lease,
    report: PendingReport | None,
    cause: Envelope[Any],
) -> tuple[Lease, Outgoing | None, Failed | None]:
    """A new lease with the report kept for it (if any takes): made ready, with its
    ``lease.ready`` in the trace of the trade that opens it; or the failure it opens with.
    A ready report made at or after the deadline opens nothing more: the lease fails at its
    deadline (at once, if that has passed)."""
    if report is None or _verdict(lease, report, cause.event_id) is not Verdict.TAKES:
        return lease, None, None
    if report.kind is ReportKind.FAILED:
        return lease, None, report.failed
    made = ready(lease, report.reported_at)
    return made, _ready_event(uow, made, cause), None
