"""What a lease is and has cost so far as its buyer and seller see it, when its interruption
comes, and when its seller may reclaim it (pure)."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from gpux_contracts.leases import LeaseStatus, LeaseTotals
from gpux_contracts.money import accrued_micros, to_micros
from gpux_contracts.offers import BillingGranularity


def cost_so_far_micros(
    *,
    billing: BillingGranularity,
    running: bool,
    price_micros_per_gpu_hour: int,
    gpus: int,
    started_at: datetime,
    ends_at: datetime | None,
    total_charged_micros: int,
    now: datetime,
) -> int:
    """The lease's cost up to ``now`` in the offer's currency, in micro-units.

    A running per-second lease accrues by the whole second (billing settles it in batches,
    so its charges trail the clock): ``round(price × gpus × s / 3600)``, up to ``ends_at``
    when it has one. It never shows less than billing already charged, so a gateway clock
    that lags billing's cannot make the cost go down. An hourly lease is charged in advance
    and an ended one is final: both cost what was charged.
    """
    if not running or billing is not BillingGranularity.SECOND:
        return total_charged_micros
    until = now if ends_at is None else min(now, ends_at)
    elapsed_s = max(0, (until - started_at) // timedelta(seconds=1))
    accrued = accrued_micros(price_micros_per_gpu_hour * gpus, elapsed_s)
    return max(accrued, total_charged_micros)


def totals_apply(held_period: int | None, period: int) -> bool:
    """Whether an event's running totals replace the lease's (never with an earlier period's).

    Lease events may be read in any order on a replay; the totals of the highest period read
    stay, so a late ``lease.charged`` cannot roll a lease's figures back.
    """
    return held_period is None or held_period <= period


class TotalsMicros(NamedTuple):
    """A lease's running totals as both stores keep them: money in micro-units, field by
    field as the lease row names them."""

    period: int
    charged_through: datetime
    total_charged_micros: int
    total_paid_micros: int
    total_fee_micros: int
    total_seller_micros: int


def totals_micros(totals: LeaseTotals) -> TotalsMicros:
    """The running totals an event carries, as the lease row keeps them."""
    return TotalsMicros(
        totals.period,
        totals.charged_through,
        to_micros(totals.total_charged),
        to_micros(totals.total_paid),
        to_micros(totals.total_fee),
        to_micros(totals.total_seller),
    )


INTERRUPTIBLE = "interruptible"
"""The tier of leases that may be interrupted (preempted, or reclaimed by their seller)."""


def lease_status(
    *,
    ended: bool,
    interrupt_at: datetime | None,
    started_at: datetime | None,
    now: datetime,
    failed: bool = False,
    provisioning: bool = False,
) -> LeaseStatus:
    """Where a lease is at ``now``, from what was read of it.

    Failed once a ``failed`` end was read, ended once any other end was (both for good);
    ``interrupting`` from its interruption notice until then; ``scheduled`` while it starts
    later (a preempting on-demand lease starts at the interrupted lease's ``interrupt_at``);
    ``provisioning`` from its start until its ``lease.ready`` was read (a lease opened with a
    provisioning deadline); else ``running``.
    """
    if failed:
        return LeaseStatus.FAILED
    if ended:
        return LeaseStatus.ENDED
    if interrupt_at is not None:
        return LeaseStatus.INTERRUPTING
    if started_at is not None and started_at > now:
        return LeaseStatus.SCHEDULED
    if provisioning:
        return LeaseStatus.PROVISIONING
    return LeaseStatus.RUNNING


STORED_FINAL = frozenset({LeaseStatus.ENDED.value, LeaseStatus.FAILED.value})
"""The stored statuses a lease never leaves (the first end read stays)."""


def stored_status(*, held: str, ready: bool, provisioning_deadline: datetime | None) -> str:
    """The status a lease row keeps after its ``lease.opened`` was read: a final one stays;
    a lease opened with a deadline provisions unless its ``lease.ready`` was read already
    (events of one lease may be replayed in any order)."""
    if held in STORED_FINAL or ready or provisioning_deadline is None:
        return held
    return LeaseStatus.PROVISIONING.value


def status_of(
    *, stored: str, interrupt_at: datetime | None, started_at: datetime | None, now: datetime
) -> LeaseStatus:
    """What a lease row with the stored status shows at ``now`` (``lease_status`` of it)."""
    return lease_status(
        ended=stored == LeaseStatus.ENDED,
        failed=stored == LeaseStatus.FAILED,
        provisioning=stored == LeaseStatus.PROVISIONING,
        interrupt_at=interrupt_at,
        started_at=started_at,
        now=now,
    )


def stored_end(reason: str) -> str:
    """The final status a ``lease.ended`` leaves: ``failed`` for a lease that never became
    ready, else ``ended``."""
    return LeaseStatus.FAILED.value if reason == "failed" else LeaseStatus.ENDED.value


def runs_until(ends_at: datetime | None, interrupt_at: datetime | None) -> datetime | None:
    """The instant a lease stops accruing: its fixed end or its interruption, the earlier."""
    if ends_at is None or interrupt_at is None:
        return ends_at or interrupt_at
    return min(ends_at, interrupt_at)


def seconds_left(interrupt_at: datetime, now: datetime) -> int:
    """Whole seconds until the interruption (rounded down, never below 0): code on the rented
    machine that checkpoints within them is done in time."""
    return max(0, (interrupt_at - now) // timedelta(seconds=1))


class ReclaimRefusal(StrEnum):
    """Why a seller's reclaim of a lease of its offer is refused (409), in order of precedence."""

    ENDED = "lease-ended"
    """The lease already ended: its GPUs are back."""
    NOT_INTERRUPTIBLE = "lease-not-interruptible"
    """An on-demand lease runs to its end: it is never interrupted."""
    INTERRUPTING = "lease-interrupting"
    """The lease is being interrupted already (it ends at its ``interrupt_at``)."""


def reclaim_refusal(*, tier: str | None, status: LeaseStatus) -> ReclaimRefusal | None:
    """Why the seller may not reclaim this lease now, or None: only an interruptible lease
    that runs, with no interruption under way."""
    if status in (LeaseStatus.ENDED, LeaseStatus.FAILED):
        return ReclaimRefusal.ENDED
    if tier != INTERRUPTIBLE:
        return ReclaimRefusal.NOT_INTERRUPTIBLE
    if status is LeaseStatus.INTERRUPTING:
        return ReclaimRefusal.INTERRUPTING
    return None
