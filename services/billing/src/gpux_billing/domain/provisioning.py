"""Provisioning: a lease waiting for its seller's access, and the seller's reports (pure).

A trade whose offer states a provisioning timeout opens its lease ``provisioning``: its
``provisioning_deadline`` is its start plus the timeout, nothing is charged and its
prepayment stays held. The seller then reports, on ``billing.commands``:

- ready (``lease.ready_reported``): the lease becomes ready at ``ready_at = max(reported_at,
  started_at)`` and is charged from then exactly as a lease starting at ``ready_at`` would be
  (``ready`` restarts its terms there: per second from ``ready_at``, an hourly lease's first
  hour at ``ready_at``, a fixed length ending ``hours`` after it);
- failed (``lease.failure_reported``): the lease ends ``failed`` (``domain.leases.settle``
  with a ``Failed``), nothing charged, the whole prepayment released.

Whichever billing applies first wins; a report for a lease that is not provisioning changes
nothing. A ready report made at or after the deadline, or at or after an interruption's
``interrupt_at``, comes too late: the lease ends as settlement ends it then (``LATE``). A
report for a lease billing has not opened yet (its trade comes on another topic) is
``PendingReport``: kept for the lease's id and applied when the trade opens it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from gpux_billing.domain.leases import Failed, Lease, ends_at


class ReportKind(StrEnum):
    """What a seller reported of a provisioning lease."""

    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class PendingReport:
    """A seller's report on a lease whose trade billing has not applied yet (the first kept
    stands)."""

    lease_id: str
    buyer_id: str
    seller_id: str
    kind: ReportKind
    reported_at: datetime
    detail: str = ""

    @property
    def failed(self) -> Failed | None:
        """The failure it reports (None: a ready report)."""
        return Failed(self.reported_at, self.detail) if self.kind is ReportKind.FAILED else None


class Verdict(StrEnum):
    """What billing does with a seller's report, in order of precedence."""

    NOT_THE_PARTIES = "not_the_parties"
    """The report names another buyer or seller than the lease's: ignored (a sender's bug)."""
    NOT_PROVISIONING = "not_provisioning"
    """The lease is ready already, failed or ended: nothing changes (a replay, a race)."""
    LATE = "late"
    """A ready report at or after the deadline (or the interruption): the lease ends then."""
    TAKES = "takes"
    """A provisioning lease: it becomes ready (or fails)."""


def provisioning_deadline(started_at: datetime, timeout_s: int) -> datetime | None:
    """When a lease starting at ``started_at`` fails unless ready (None: no timeout, ready
    at its start)."""
    return None if timeout_s <= 0 else started_at + timedelta(seconds=timeout_s)


def verdict(lease: Lease, buyer_id: str, seller_id: str, kind: ReportKind, at: datetime) -> Verdict:
    """Whether a seller's report of ``kind`` made at ``at`` takes on ``lease``, or why not."""
    terms, state = lease.terms, lease.state
    if terms.buyer_id != buyer_id or terms.seller_id != seller_id:
        return Verdict.NOT_THE_PARTIES
    if not state.provisioning:
        return Verdict.NOT_PROVISIONING
    if kind is ReportKind.READY:
        deadline = state.provisioning_deadline
        assert deadline is not None
        interruption = state.interruption
        if at >= deadline or (interruption is not None and at >= interruption.at):
            return Verdict.LATE
    return Verdict.TAKES


def ready_at(lease: Lease, reported_at: datetime) -> datetime:
    """When a provisioning lease reported ready at ``reported_at`` is ready: then, or at its
    start if that is later."""
    return max(reported_at, lease.terms.started_at)


def ready(lease: Lease, reported_at: datetime) -> Lease:
    """The provisioning lease once ready: charged from ``ready_at`` as a lease starting then
    (a fixed length ends ``hours`` after it); its prepayment and interruption stay."""
    if not lease.state.provisioning:
        raise ValueError("only a provisioning lease can become ready")
    at = ready_at(lease, reported_at)
    terms = replace(lease.terms, started_at=at, ends_at=ends_at(at, lease.hours))
    return replace(lease, terms=terms, state=replace(lease.state, provisioning_deadline=None))
