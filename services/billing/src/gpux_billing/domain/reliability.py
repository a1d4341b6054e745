"""Seller reliability: which lease outcomes count, and how counts add up (pure).

Billing decides every outcome that counts (``gpux_contracts.reliability``), so it counts them
where it decides them, per offer and seller, each lease at most once per kind:

- ``ready_in_time``: a provisioning lease became ready before its deadline
  (``domain.provisioning.ready`` only takes a report made before it), whether the report came
  after its trade or before it (the lease then opens ready);
- ``failed``: a lease ended ``failed`` (the seller's report, or the deadline passed first);
- ``reclaimed``: an interruption the seller caused (``InterruptionCause.RECLAIMED``) took on a
  lease; a preemption is an on-demand buyer's doing and counts nothing.

Only a lease with a deadline is measured: a lease whose offer has no provisioning timeout
has nothing to be ready in time for (it is ready at its start, and its seller's reports of
it change nothing), so it never counts ready in time. It still counts reclaimed. Otherwise a
seller whose offers state no timeout would be ready in time on every lease, failed on none,
and meet every ``min_reliability``; such a seller has no rate until something it does
counts.

A lease can count in more than one kind (ready, then reclaimed), never twice in one: what was
counted is kept per lease and kind, so a redelivered event or a settlement repeated after a
crash counts nothing more. An offer's counts are its counted outcomes by kind; a seller's are
the sum of its offers'. Counts only grow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from gpux_billing.domain.leases import Interruption, Lease, State
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.reliability import ReliabilityCounts


class Kind(StrEnum):
    """What a counted outcome says of its seller (the fields of ``ReliabilityCounts``)."""

    READY_IN_TIME = "ready_in_time"
    """The lease became ready before its deadline (only a lease with a deadline counts)."""
    FAILED = "failed"
    """The lease ended ``failed``: it never became ready."""
    RECLAIMED = "reclaimed"
    """The seller reclaimed the lease's GPUs (an interruption of cause ``reclaimed``)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One lease's outcome of one kind, for its offer and seller."""

    lease_id: str
    offer_id: str
    seller_id: str
    kind: Kind

    @property
    def key(self) -> tuple[str, Kind]:
        """What counts once: the lease and the kind."""
        return self.lease_id, self.kind


def _of(lease: Lease, kind: Kind) -> Outcome:
    return Outcome(lease.id, lease.offer_id, lease.terms.seller_id, kind)


def ready_in_time(lease: Lease) -> Outcome:
    """A provisioning lease made ready (its report came before the deadline)."""
    return _of(lease, Kind.READY_IN_TIME)


def opened(traded: Lease, opening: Lease) -> Outcome | None:
    """A new lease as its trade opens it (``traded``: as the trade made it; ``opening``: with
    what came before the trade taken): ready in time if it had a deadline and its seller's
    ready report, kept from before the trade, made it ready; a provisioning one counts later.
    A lease without a deadline (its offer has no provisioning timeout) is not measured."""
    if traded.state.provisioning_deadline is None:
        return None  # nothing to be ready in time for
    if opening.state.provisioning_deadline is not None:
        return None  # still provisioning (or failed, or interrupted, as it opens)
    return _of(opening, Kind.READY_IN_TIME)


def settled(lease: Lease, after: State) -> Outcome | None:
    """What a settlement step that takes ``lease`` to ``after`` counts: its failure, when it
    ends the lease ``failed`` (a seller's report or the deadline)."""
    if lease.state.ended or after.end_reason is not LeaseEndReason.FAILED:
        return None
    return _of(lease, Kind.FAILED)


def interrupted(lease: Lease, interruption: Interruption) -> Outcome | None:
    """An interruption that took on ``lease``: reclaimed when its seller caused it (a
    preemption counts nothing)."""
    if interruption.cause is not InterruptionCause.RECLAIMED:
        return None
    return _of(lease, Kind.RECLAIMED)


def distinct(outcomes: Iterable[Outcome]) -> list[Outcome]:
    """The outcomes without repeats of a lease and kind (the first stands), in order."""
    seen: dict[tuple[str, Kind], Outcome] = {}
    for outcome in outcomes:
        seen.setdefault(outcome.key, outcome)
    return list(seen.values())


def add(counts: ReliabilityCounts, kinds: Iterable[Kind]) -> ReliabilityCounts:
    """``counts`` with one more of each kind in ``kinds``."""
    more = dict.fromkeys(Kind, 0)
    for kind in kinds:
        more[kind] += 1
    return ReliabilityCounts(
        ready_in_time=counts.ready_in_time + more[Kind.READY_IN_TIME],
        failed=counts.failed + more[Kind.FAILED],
        reclaimed=counts.reclaimed + more[Kind.RECLAIMED],
    )


def summed(counts: Iterable[ReliabilityCounts]) -> ReliabilityCounts:
    """Counts added up (a seller's, from its offers')."""
    listed = list(counts)
    return ReliabilityCounts(
        ready_in_time=sum(c.ready_in_time for c in listed),
        failed=sum(c.failed for c in listed),
        reclaimed=sum(c.reclaimed for c in listed),
    )


@dataclass(frozen=True, slots=True)
class Counted:
    """What one counting did: the outcomes it counted (new ones, in order), and the counts
    after it of their offers and of their sellers (over all of each seller's offers)."""

    new: tuple[Outcome, ...] = ()
    offers: Mapping[str, ReliabilityCounts] = field(default_factory=dict)
    sellers: Mapping[str, ReliabilityCounts] = field(default_factory=dict)

    def last(self) -> dict[str, Outcome]:
        """Each changed offer's outcome counted last, by offer id in key order."""
        found: dict[str, Outcome] = {}
        for outcome in self.new:
            found[outcome.offer_id] = outcome
        return dict(sorted(found.items()))
