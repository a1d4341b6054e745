"""The provisioning rules: a provisioning lease charges nothing and only ends; once ready it
bills exactly the seconds from ``ready_at`` to its end; a failed lease charges nothing and
releases its whole prepayment (pure)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpux_billing.domain.leases import (
    Action,
    Charge,
    Ended,
    Failed,
    Interruption,
    Lease,
    State,
    Terms,
    ends_at,
    next_due,
    settle,
    whole_seconds,
)
from gpux_billing.domain.provisioning import (
    PendingReport,
    ReportKind,
    Verdict,
    provisioning_deadline,
    ready,
    ready_at,
    verdict,
)
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason, LeaseFailure
from gpux_contracts.money import Currency, accrued_micros
from gpux_contracts.offers import BillingGranularity

from .lease_setup import POLICY, RICH, T0, at

pytestmark = pytest.mark.unit

TIMEOUT_S = 600
DEADLINE = T0 + timedelta(seconds=TIMEOUT_S)
HELD = 7_200_000
PRICE = 3_600_000  # an hour of the lease's GPUs: 1,000 micros a second


def lease(
    billing: BillingGranularity = BillingGranularity.SECOND,
    hours: int | None = None,
    wallet: Currency = Currency.USD,
    interruption: Interruption | None = None,
) -> Lease:
    """A provisioning lease starting at ``T0`` with a 600 s timeout and ``HELD`` prepaid."""
    terms = Terms(
        "L1", "b1", "s1", Currency.USD, wallet, PRICE, billing, T0, ends_at(T0, hours), 60
    )
    state = State(
        held_micros=HELD,
        provisioning_deadline=provisioning_deadline(T0, TIMEOUT_S),
        interruption=interruption,
    )
    return Lease("L1", "o1", "offer-1", "gpu", "on_demand", 2, PRICE // 2, hours, terms, state)


def charged(actions: tuple[object, ...]) -> int:
    return sum(a.amount_micros for a in actions if isinstance(a, Charge))


def test_a_timeout_gives_a_deadline_and_none_means_ready_at_the_start() -> None:
    assert provisioning_deadline(T0, 600) == DEADLINE
    assert provisioning_deadline(T0, 0) is None
    assert lease().state.provisioning
    assert not State().provisioning


def test_a_provisioning_lease_is_due_at_its_deadline_or_its_interruption_first() -> None:
    provisioning = lease()
    assert next_due(provisioning.terms, provisioning.state) == DEADLINE
    sooner = Interruption(at(120), InterruptionCause.RECLAIMED, T0)
    interrupted = lease(interruption=sooner)
    assert next_due(interrupted.terms, interrupted.state) == at(120)
    later = lease(interruption=Interruption(at(900), InterruptionCause.RECLAIMED, T0))
    assert next_due(later.terms, later.state) == DEADLINE


@pytest.mark.parametrize("billing", list(BillingGranularity))
def test_nothing_is_charged_while_provisioning_not_even_an_hourly_first_hour(
    billing: BillingGranularity,
) -> None:
    provisioning = lease(billing)
    out = settle(provisioning.terms, provisioning.state, RICH, at(599), None, policy=POLICY)
    assert (out.state, out.actions, out.available_micros) == (provisioning.state, (), RICH)


def test_the_deadline_fails_the_lease_with_nothing_charged_and_all_released() -> None:
    provisioning = lease(BillingGranularity.HOUR)
    out = settle(provisioning.terms, provisioning.state, RICH, at(700), None, policy=POLICY)
    assert out.actions == (Ended(DEADLINE, LeaseEndReason.FAILED, HELD),)
    assert out.state.failure is LeaseFailure.PROVISIONING_TIMEOUT
    assert (out.state.held_micros, out.state.charged_micros, out.state.period) == (0, 0, 0)
    assert next_due(provisioning.terms, out.state) is None


def test_no_rate_is_needed_to_end_a_provisioning_lease_across_currencies() -> None:
    provisioning = lease(wallet=Currency.EUR)
    failed = Failed(at(30), "no GPUs after all")
    out = settle(
        provisioning.terms, provisioning.state, RICH, at(30), None, policy=POLICY, failed=failed
    )
    assert out.actions == (Ended(at(30), LeaseEndReason.FAILED, HELD),)
    assert (out.state.failure, out.state.failure_detail) == (
        LeaseFailure.SELLER_REPORTED,
        "no GPUs after all",
    )


def test_a_stop_ends_a_provisioning_lease_stopped_with_nothing_charged() -> None:
    provisioning = lease()
    out = settle(
        provisioning.terms, provisioning.state, RICH, at(60), None, policy=POLICY, stop_at=at(60)
    )
    assert out.actions == (Ended(at(60), LeaseEndReason.STOPPED, HELD),)
    assert out.state.failure is None


def test_an_interrupted_provisioning_lease_ends_at_interrupt_at_with_nothing_charged() -> None:
    notice = Interruption(at(150.5), InterruptionCause.PREEMPTED, T0)
    provisioning = lease(interruption=notice)
    out = settle(provisioning.terms, provisioning.state, RICH, at(200), None, policy=POLICY)
    assert out.actions == (Ended(at(150.5), LeaseEndReason.INTERRUPTED, HELD),)


def test_the_first_of_a_stop_a_report_and_the_deadline_ends_it_a_tie_to_the_stop() -> None:
    provisioning = lease()
    t, s = provisioning.terms, provisioning.state
    late_report = Failed(at(650))
    out = settle(t, s, RICH, at(650), None, policy=POLICY, failed=late_report)
    assert out.state.failure is LeaseFailure.PROVISIONING_TIMEOUT  # the deadline came first
    out = settle(t, s, RICH, at(700), None, policy=POLICY, stop_at=DEADLINE)
    assert out.state.end_reason is LeaseEndReason.STOPPED


def test_a_report_names_the_lease_parties_and_only_a_provisioning_lease_takes_it() -> None:
    provisioning = lease()
    ok = verdict(provisioning, "b1", "s1", ReportKind.READY, at(30))
    assert ok is Verdict.TAKES
    assert verdict(provisioning, "b2", "s1", ReportKind.READY, at(30)) is Verdict.NOT_THE_PARTIES
    assert verdict(provisioning, "b1", "s2", ReportKind.FAILED, at(30)) is Verdict.NOT_THE_PARTIES
    made = ready(provisioning, at(30))
    assert verdict(made, "b1", "s1", ReportKind.READY, at(40)) is Verdict.NOT_PROVISIONING
    assert verdict(made, "b1", "s1", ReportKind.FAILED, at(40)) is Verdict.NOT_PROVISIONING
    over = replace(provisioning, state=replace(provisioning.state, ended_at=T0))
    assert verdict(over, "b1", "s1", ReportKind.READY, at(40)) is Verdict.NOT_PROVISIONING


def test_a_ready_report_at_the_deadline_or_interruption_is_late_a_failure_never() -> None:
    provisioning = lease()
    assert verdict(provisioning, "b1", "s1", ReportKind.READY, DEADLINE) is Verdict.LATE
    assert verdict(provisioning, "b1", "s1", ReportKind.FAILED, at(900)) is Verdict.TAKES
    notice = Interruption(at(120), InterruptionCause.RECLAIMED, T0)
    interrupted = lease(interruption=notice)
    assert verdict(interrupted, "b1", "s1", ReportKind.READY, at(120)) is Verdict.LATE
    assert verdict(interrupted, "b1", "s1", ReportKind.READY, at(119)) is Verdict.TAKES


def test_ready_restarts_the_terms_at_ready_at_and_never_before_the_start() -> None:
    fixed = lease(BillingGranularity.HOUR, hours=2)
    made = ready(fixed, at(90.5))
    assert ready_at(fixed, at(90.5)) == at(90.5)
    assert (made.terms.started_at, made.terms.ends_at) == (at(90.5), at(90.5 + 7200))
    assert made.state == replace(fixed.state, provisioning_deadline=None)
    assert ready_at(fixed, at(-30)) == T0
    with pytest.raises(ValueError, match="provisioning"):
        ready(made, at(100))


def test_an_hourly_lease_pays_its_first_hour_at_ready_at_the_next_an_hour_later() -> None:
    made = ready(lease(BillingGranularity.HOUR), at(300))
    first = settle(made.terms, made.state, RICH, at(300), None, policy=POLICY)
    ((charge,),) = [[a for a in first.actions if isinstance(a, Charge)]]
    assert (charge.period, charge.at, charge.amount_micros) == (1, at(300), PRICE)
    assert charge.from_held_micros == PRICE
    assert next_due(made.terms, first.state) == at(3900)


def test_a_fixed_length_lease_completes_hours_after_ready_at() -> None:
    made = ready(lease(BillingGranularity.SECOND, hours=1), at(45))
    out = settle(made.terms, made.state, RICH, at(4000), None, policy=POLICY)
    assert (out.state.ended_at, out.state.end_reason) == (at(3645), LeaseEndReason.COMPLETED)
    assert out.state.charged_micros == PRICE


def test_a_pending_report_says_which_failure_it_reports() -> None:
    failed = PendingReport("L1", "b1", "s1", ReportKind.FAILED, at(5), "broken")
    assert failed.failed == Failed(at(5), "broken")
    assert PendingReport("L1", "b1", "s1", ReportKind.READY, at(5)).failed is None


@settings(max_examples=150, deadline=None)
@given(
    reported=st.integers(min_value=-300, max_value=TIMEOUT_S - 1),
    ticks=st.lists(st.integers(min_value=0, max_value=3 * 3600), max_size=6),
    stop=st.integers(min_value=0, max_value=3 * 3600),
    price=st.integers(min_value=1, max_value=50_000_000),
)
def test_a_ready_lease_bills_exactly_the_seconds_from_ready_at_to_its_end(
    reported: int, ticks: list[int], stop: int, price: int
) -> None:
    provisioning = lease()
    provisioning = replace(
        provisioning, terms=replace(provisioning.terms, price_micros_per_hour=price)
    )
    made = ready(provisioning, at(reported))
    start = made.terms.started_at
    stop_at = start + timedelta(seconds=stop)
    state, actions = made.state, list[Action]()
    for tick in sorted(ticks):
        until = start + timedelta(seconds=tick)
        if until < stop_at:
            step = settle(made.terms, state, RICH, until, None, policy=POLICY)
            state, actions = step.state, [*actions, *step.actions]
    last = settle(made.terms, state, RICH, stop_at, None, policy=POLICY, stop_at=stop_at)
    end, actions = last.state, [*actions, *last.actions]
    assert (end.ended_at, end.end_reason) == (stop_at, LeaseEndReason.STOPPED)
    assert end.charged_micros == accrued_micros(price, whole_seconds(start, stop_at))
    assert end.paid_micros == end.charged_micros
    # The prepayment paid the first charges and the rest of it was released at the end.
    from_held = sum(a.from_held_micros for a in actions if isinstance(a, Charge))
    released = sum(a.released_micros for a in actions if isinstance(a, Ended))
    assert from_held + released == HELD
    assert all(c.period_start >= start for c in actions if isinstance(c, Charge))


@settings(max_examples=150, deadline=None)
@given(
    billing=st.sampled_from(list(BillingGranularity)),
    until=st.integers(min_value=0, max_value=3 * 3600),
    how=st.sampled_from(["deadline", "reported", "stop"]),
    when=st.integers(min_value=-60, max_value=TIMEOUT_S + 60),
    held=st.integers(min_value=0, max_value=10**9),
)
def test_a_lease_ended_while_provisioning_charges_nothing_and_releases_its_prepayment(
    billing: BillingGranularity, until: int, how: str, when: int, held: int
) -> None:
    provisioning = lease(billing)
    state = replace(provisioning.state, held_micros=held)
    failed = Failed(at(when)) if how == "reported" else None
    stop_at = at(when) if how == "stop" else None
    limit = at(max(until, when))
    out = settle(
        provisioning.terms, state, 5, limit, None, policy=POLICY, stop_at=stop_at, failed=failed
    )
    if how == "deadline" and limit < DEADLINE:
        assert out.state == state
        return
    (ended,) = out.actions
    assert isinstance(ended, Ended)
    assert ended.released_micros == held
    assert charged(out.actions) == 0
    assert out.available_micros == 5
    assert (out.state.held_micros, out.state.charged_micros, out.state.paid_micros) == (0, 0, 0)
    assert T0 <= ended.at <= DEADLINE
    if ended.reason is LeaseEndReason.FAILED:
        assert out.state.failure is not None
