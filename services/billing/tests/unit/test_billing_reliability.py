"""The reliability rules: which outcomes count (a provisioning lease made ready, as its trade
opens it or later; a failed end; a reclaim; never a preemption or another end, nor a lease
without a provisioning timeout as ready), each lease and kind once, and how counts add up
(an offer's by kind, a seller's over its offers) (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_billing.domain.leases import Interruption, Lease, Policy, State, Terms, settle
from gpux_billing.domain.provisioning import provisioning_deadline, ready
from gpux_billing.domain.reliability import (
    Counted,
    Kind,
    Outcome,
    add,
    distinct,
    interrupted,
    opened,
    ready_in_time,
    settled,
    summed,
)
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.reliability import ReliabilityCounts

from .lease_setup import T0

pytestmark = pytest.mark.unit

READY, FAILED, RECLAIMED = Kind.READY_IN_TIME, Kind.FAILED, Kind.RECLAIMED


def lease(timeout_s: int = 600) -> Lease:
    """L1 of s1's offer-1, provisioning for ``timeout_s`` (0: ready at its start)."""
    terms = Terms(
        "L1", "b1", "s1", Currency.USD, Currency.USD, 2_000_000,
        BillingGranularity.SECOND, T0, None, 60,
    )  # fmt: skip
    state = State(held_micros=4_000_000, provisioning_deadline=provisioning_deadline(T0, timeout_s))
    return Lease("L1", "o1", "offer-1", "gpu", "interruptible", 2, 1_000_000, None, terms, state)


def outcome(kind: Kind) -> Outcome:
    return Outcome("L1", "offer-1", "s1", kind)


def test_a_lease_made_ready_by_an_earlier_report_counts_as_it_opens_others_wait() -> None:
    made = ready(lease(600), T0 + timedelta(seconds=10))
    assert opened(lease(600), made) == outcome(READY)
    assert opened(lease(600), lease(600)) is None
    assert ready_in_time(ready(lease(), T0)) == outcome(READY)


def test_a_lease_without_a_provisioning_timeout_is_not_measured_ready_in_time() -> None:
    """Adapted deliberately: such a lease counted ready in time as it opened, so a seller whose
    offers state no timeout could never count failed and met every minimum."""
    assert opened(lease(0), lease(0)) is None
    reclaim = Interruption(T0 + timedelta(seconds=120), InterruptionCause.RECLAIMED, T0)
    assert interrupted(lease(0), reclaim) == outcome(RECLAIMED)  # that still counts


def test_only_an_end_failed_counts_in_settlement_and_only_once() -> None:
    provisioning = lease()
    deadline = T0 + timedelta(seconds=700)
    out = settle(provisioning.terms, provisioning.state, 10**9, deadline, None, policy=Policy())
    assert out.state.end_reason is LeaseEndReason.FAILED
    assert settled(provisioning, out.state) == outcome(FAILED)
    failed = replace(provisioning, state=out.state)
    assert settled(failed, out.state) is None  # ended already: counted when it ended
    stopped = replace(out.state, end_reason=LeaseEndReason.STOPPED, failure=None)
    assert settled(provisioning, stopped) is None
    assert settled(provisioning, provisioning.state) is None


@pytest.mark.parametrize(
    ("cause", "counted"),
    [(InterruptionCause.RECLAIMED, outcome(RECLAIMED)), (InterruptionCause.PREEMPTED, None)],
)
def test_a_reclaim_counts_and_a_preemption_does_not(
    cause: InterruptionCause, counted: Outcome | None
) -> None:
    assert interrupted(lease(0), Interruption(T0 + timedelta(seconds=120), cause, T0)) == counted


def test_repeats_of_a_lease_and_kind_count_once_the_first_standing() -> None:
    other = Outcome("L2", "offer-2", "s1", READY)
    found = distinct([outcome(READY), other, outcome(READY), outcome(RECLAIMED), other])
    assert found == [outcome(READY), other, outcome(RECLAIMED)]


def test_the_last_counted_outcome_of_each_offer_in_key_order() -> None:
    first, second = Outcome("L1", "offer-b", "s1", READY), Outcome("L2", "offer-b", "s1", FAILED)
    third = Outcome("L3", "offer-a", "s2", READY)
    assert Counted((first, second, third)).last() == {"offer-a": third, "offer-b": second}


kinds = st.lists(st.sampled_from(list(Kind)), max_size=30)
counts = st.builds(
    ReliabilityCounts,
    ready_in_time=st.integers(0, 10**6),
    failed=st.integers(0, 10**6),
    reclaimed=st.integers(0, 10**6),
)


@given(counts, kinds)
def test_adding_outcomes_grows_each_kind_by_its_own(
    before: ReliabilityCounts, added: list[Kind]
) -> None:
    after = add(before, added)
    for kind in Kind:
        assert getattr(after, kind.value) == getattr(before, kind.value) + added.count(kind)
    assert after.total == before.total + len(added)


@given(st.lists(counts, max_size=8), st.integers(0, 8))
def test_a_sellers_counts_are_its_offers_summed_in_any_grouping(
    offers: list[ReliabilityCounts], cut: int
) -> None:
    whole = summed(offers)
    assert whole == summed([summed(offers[:cut]), summed(offers[cut:])])
    assert whole.total == sum(c.total for c in offers)
    assert summed([]) == ReliabilityCounts()
