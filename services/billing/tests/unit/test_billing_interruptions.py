"""Interruptions and starts (pure): a lease bills from its start to its stop or its
``interrupt_at``, whichever comes first, and never before its start."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from gpux_billing.domain.interruptions import Verdict, interrupt, notice_seconds, verdict
from gpux_billing.domain.leases import (
    Action,
    Ended,
    Interruption,
    Lease,
    State,
    Terms,
    next_due,
    settle,
    whole_seconds,
)
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency, accrued_micros
from gpux_contracts.offers import BillingGranularity, Tier

from .lease_setup import POLICY, RICH, T0, at, charges

HELD = 5_000_000
PREEMPTED = InterruptionCause.PREEMPTED


def terms(
    billing: BillingGranularity = BillingGranularity.SECOND,
    price: int = 3_600_000,  # 1,000 micros a second
    start: datetime = T0,
    ends_at: datetime | None = None,
    every_s: int = 60,
) -> Terms:
    return Terms(
        "L1", "b1", "s1", Currency.USD, Currency.USD, price, billing, start, ends_at, every_s
    )


RUNNING = State()


def lease(state: State = RUNNING, tier: Tier = Tier.INTERRUPTIBLE) -> Lease:
    return Lease("L1", "o1", "offer-1", "gpu", tier.value, 2, 1_800_000, None, terms(), state)


def interruption(interrupt_s: float, noticed_s: float | None = None) -> Interruption:
    noticed = interrupt_s - 120 if noticed_s is None else noticed_s
    return Interruption(at(interrupt_s), PREEMPTED, at(noticed))


def ended(actions: tuple[Action, ...]) -> list[Ended]:
    return [a for a in actions if isinstance(a, Ended)]


# Which requests take -----------------------------------------------------------------------


def test_a_running_interruptible_lease_of_the_buyer_is_interrupted() -> None:
    assert verdict(lease(), "b1") is Verdict.INTERRUPT


@pytest.mark.parametrize(
    ("candidate", "buyer", "expected"),
    [
        (lease(), "b2", Verdict.NOT_THE_BUYERS),
        (lease(State(ended_at=T0, end_reason=LeaseEndReason.STOPPED)), "b1", Verdict.ENDED),
        (lease(State(interruption=interruption(300))), "b1", Verdict.INTERRUPTING),
        (lease(tier=Tier.ON_DEMAND), "b1", Verdict.ON_DEMAND),
        # Precedence: an ended lease that had an interruption is ended; another buyer's first.
        (
            lease(
                State(
                    ended_at=T0,
                    end_reason=LeaseEndReason.INTERRUPTED,
                    interruption=interruption(0),
                )
            ),
            "b1",
            Verdict.ENDED,
        ),
        (
            lease(State(ended_at=T0, end_reason=LeaseEndReason.STOPPED)),
            "b2",
            Verdict.NOT_THE_BUYERS,
        ),
        (lease(State(interruption=interruption(300)), Tier.ON_DEMAND), "b1", Verdict.INTERRUPTING),
    ],
)
def test_what_is_not_interrupted_and_why(candidate: Lease, buyer: str, expected: Verdict) -> None:
    assert verdict(candidate, buyer) is expected


def test_an_interruption_is_set_once() -> None:
    first = interrupt(State(), interruption(300))
    assert first.interruption == interruption(300)
    with pytest.raises(ValueError, match="interrupted"):
        interrupt(first, interruption(200))
    with pytest.raises(ValueError, match="interrupted"):
        interrupt(State(ended_at=T0, end_reason=LeaseEndReason.STOPPED), interruption(300))


def test_the_notice_is_whole_seconds_from_the_decision_to_interrupt_at() -> None:
    assert notice_seconds(interruption(300, 180)) == 120
    assert notice_seconds(interruption(300.9, 180)) == 120  # a started second is not notice
    assert notice_seconds(interruption(300, 300)) == 0


def test_an_interrupted_lease_is_due_at_interrupt_at_at_the_latest() -> None:
    t = terms()
    assert next_due(t, State()) == at(60)
    assert next_due(t, State(interruption=interruption(30.5))) == at(30.5)
    assert next_due(t, State(interruption=interruption(600))) == at(60)
    hourly = terms(BillingGranularity.HOUR)
    paid = settle(hourly, State(), RICH, T0, None, policy=POLICY).state
    assert next_due(hourly, replace(paid, interruption=interruption(1800))) == at(1800)


# How an interrupted lease ends --------------------------------------------------------------


def test_an_interrupted_lease_ends_at_interrupt_at_charged_exactly_to_it() -> None:
    t = terms()
    state = interrupt(State(held_micros=HELD), interruption(150.75))
    early = settle(t, state, RICH, at(150), None, policy=POLICY)
    assert not early.state.ended  # not yet: two periods charged
    assert early.state.charged_micros == 120_000
    out = settle(t, early.state, early.available_micros, at(400), None, policy=POLICY)
    assert [c.amount_micros for c in charges(out.actions)] == [30_000]  # 120 s to 150 s
    assert out.state.end_reason is LeaseEndReason.INTERRUPTED
    assert out.state.ended_at == at(150.75)
    assert out.state.charged_micros == accrued_micros(3_600_000, 150)
    assert out.state.charged_through == at(150.75)
    assert ended(out.actions) == [
        Ended(at(150.75), LeaseEndReason.INTERRUPTED, HELD - 150_000)
    ]  # the unused prepayment goes back
    assert next_due(t, out.state) is None


def test_a_stop_before_interrupt_at_is_an_ordinary_stop() -> None:
    state = interrupt(State(), interruption(300))
    out = settle(terms(), state, RICH, at(100), None, policy=POLICY, stop_at=at(100))
    assert (out.state.end_reason, out.state.ended_at) == (LeaseEndReason.STOPPED, at(100))
    assert out.state.charged_micros == 100_000


def test_a_stop_after_interrupt_at_finds_the_lease_interrupted() -> None:
    state = interrupt(State(), interruption(300))
    out = settle(terms(), state, RICH, at(500), None, policy=POLICY, stop_at=at(500))
    assert (out.state.end_reason, out.state.ended_at) == (LeaseEndReason.INTERRUPTED, at(300))
    assert out.state.charged_micros == 300_000


def test_ties_go_to_the_stop_then_to_the_fixed_end() -> None:
    state = interrupt(State(), interruption(300))
    stopped = settle(terms(), state, RICH, at(300), None, policy=POLICY, stop_at=at(300))
    assert stopped.state.end_reason is LeaseEndReason.STOPPED
    fixed = terms(ends_at=at(300))
    completed = settle(fixed, state, RICH, at(300), None, policy=POLICY)
    assert completed.state.end_reason is LeaseEndReason.COMPLETED
    assert completed.state.charged_micros == stopped.state.charged_micros == 300_000


def test_a_lease_charged_past_interrupt_at_ends_at_its_last_settled_instant() -> None:
    # Billing learnt of the interruption late (after it charged past it): charged time is
    # never taken back, as with a late stop.
    t = terms()
    charged = settle(t, State(), RICH, at(180), None, policy=POLICY).state
    out = settle(t, interrupt(charged, interruption(150)), RICH, at(181), None, policy=POLICY)
    assert (out.state.end_reason, out.state.ended_at) == (LeaseEndReason.INTERRUPTED, at(180))
    assert charges(out.actions) == []


def test_an_hourly_lease_interrupted_keeps_the_hours_it_started() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000)
    opened = settle(t, State(), RICH, T0, None, policy=POLICY)
    state = interrupt(opened.state, interruption(3700))
    out = settle(t, state, RICH, at(4000), None, policy=POLICY)
    assert (out.state.end_reason, out.state.ended_at) == (LeaseEndReason.INTERRUPTED, at(3700))
    assert out.state.charged_micros == 4_000_000


# Leases that start later -------------------------------------------------------------------


def test_an_hourly_lease_sold_ahead_of_its_start_pays_its_first_hour_at_the_start() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000, start=at(120), ends_at=at(120 + 7200))
    opened = settle(t, State(held_micros=HELD), RICH, T0, None, policy=POLICY)
    assert opened.actions == ()
    assert next_due(t, opened.state) == at(120)
    early = settle(t, opened.state, RICH, at(119.9), None, policy=POLICY)
    assert early.actions == ()
    started = settle(t, opened.state, RICH, at(120), None, policy=POLICY)
    (first,) = charges(started.actions)
    assert (first.period_start, first.at, first.amount_micros) == (at(120), at(120), 2_000_000)


@pytest.mark.parametrize("billing", list(BillingGranularity))
def test_a_lease_stopped_before_its_start_costs_nothing_and_releases_its_hold(
    billing: BillingGranularity,
) -> None:
    t = terms(billing, start=at(120))
    opened = settle(t, State(held_micros=HELD), RICH, T0, None, policy=POLICY)
    out = settle(t, opened.state, RICH, at(60), None, policy=POLICY, stop_at=at(60))
    assert charges(out.actions) == []
    assert ended(out.actions) == [Ended(at(120), LeaseEndReason.STOPPED, HELD)]
    assert out.state.charged_micros == 0
    assert out.available_micros == RICH


def test_a_per_second_lease_counts_its_periods_from_its_start() -> None:
    t = terms(start=at(120.5))
    before = settle(t, State(), RICH, at(150), None, policy=POLICY)
    assert before.actions == ()
    assert next_due(t, before.state) == at(180.5)
    first = settle(t, before.state, RICH, at(181), None, policy=POLICY)
    (charge,) = charges(first.actions)
    assert (charge.period_start, charge.period_end) == (at(120.5), at(180.5))
    assert charge.amount_micros == 60_000


# The invariant -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One lease's life as billing sees it: its settlements and requests, in time order."""

    state: State
    available: int
    actions: list[Action]


def _apply(t: Terms, run: Run, until: datetime, stop_at: datetime | None = None) -> Run:
    out = settle(t, run.state, run.available, until, None, policy=POLICY, stop_at=stop_at)
    return Run(out.state, out.available_micros, run.actions + list(out.actions))


def _life(
    t: Terms,
    stop: datetime | None,
    notice: Interruption | None,
    ticks: list[datetime],
    horizon: datetime,
) -> Run:
    """Open at ``T0``; the interruption is handled when the book decided, a stop at its
    instant (as the gateway sends it); the loop ticks; a last tick at ``horizon``."""
    steps: list[tuple[datetime, int, datetime | None]] = [(tick, 2, None) for tick in ticks]
    if notice is not None:
        steps.append((notice.noticed_at, 0, None))
    if stop is not None:
        steps.append((stop, 1, stop))
    run = _apply(t, Run(State(held_micros=HELD), RICH, []), T0)
    for when, kind, stop_at in sorted(steps, key=lambda s: (s[0], s[1])):
        if kind == 0:
            if notice is not None and not run.state.ended:
                run = replace(run, state=interrupt(run.state, notice))
        elif kind == 1:
            run = _apply(t, run, when, stop_at)
        else:
            run = _apply(t, run, when)
    return _apply(t, run, horizon)


offsets = st.floats(min_value=0, max_value=2 * 3600, allow_nan=False).map(lambda s: round(s, 6))
prices = st.integers(min_value=1, max_value=50_000_000)
starts = st.floats(min_value=0, max_value=600).map(lambda s: round(s, 6))
LIFE: dict[str, st.SearchStrategy[Any]] = {
    "price": prices,
    "start_s": starts,
    "stop_s": st.none() | offsets,
    "interrupt_s": st.none() | offsets,
    "ticks": st.lists(offsets, max_size=10),
}
"""A lease's life: its price, its start, a stop and an interruption (either may not come) and
the settlement loop's ticks, in seconds from ``T0``."""


@settings(max_examples=300, deadline=None)
@given(
    **LIFE,
    notice_s=st.integers(min_value=0, max_value=3600),
    every_s=st.sampled_from([7, 60, 300]),
)
def test_a_per_second_lease_bills_exactly_the_seconds_from_its_start_to_its_end(
    *,
    price: int,
    start_s: float,
    stop_s: float | None,
    interrupt_s: float | None,
    notice_s: int,
    ticks: list[float],
    every_s: int,
) -> None:
    start = at(start_s)
    t = terms(price=price, start=start, every_s=every_s)
    stop = None if stop_s is None else at(stop_s)
    notice = None
    if interrupt_s is not None:
        notice = Interruption(at(interrupt_s), PREEMPTED, max(T0, at(interrupt_s - notice_s)))
    horizon = at(3 * 3600)
    run = _life(t, stop, notice, [at(x) for x in ticks], horizon)
    paid = charges(run.actions)
    event(f"end: {run.state.end_reason}")
    ends = [x for x in (stop, None if notice is None else notice.at) if x is not None]
    if ends:
        end = max(start, min(ends))
        assert run.state.ended_at == end
        if min(ends) >= start:  # (one that ends before its start ends at it, for nothing)
            stopped = stop is not None and (notice is None or stop <= notice.at)
            expected = LeaseEndReason.STOPPED if stopped else LeaseEndReason.INTERRUPTED
            assert run.state.end_reason is expected
        seconds = whole_seconds(start, end)
    else:
        assert not run.state.ended
        seconds = whole_seconds(start, horizon) // every_s * every_s  # whole periods so far
    # The one rounding rule, once over the whole lease: price x seconds.
    assert sum(c.amount_micros for c in paid) == accrued_micros(price, seconds)
    assert run.state.charged_micros == accrued_micros(price, seconds)
    # Nothing before the start, nothing after the end; the prepayment used or given back.
    assert all(c.period_start >= start and c.at >= start for c in paid)
    if run.state.ended_at is not None:
        assert all(c.period_end <= run.state.ended_at for c in paid)
        (end_action,) = ended(tuple(run.actions))
        from_held = sum(c.from_held_micros for c in paid)
        assert end_action.released_micros == HELD - from_held
    ids = [c.transfer_id("L1") for c in paid]
    assert len(ids) == len(set(ids))


@settings(max_examples=150, deadline=None)
@given(**LIFE)
def test_an_hourly_lease_pays_the_hours_it_started_from_its_start_to_its_end(
    price: int,
    start_s: float,
    stop_s: float | None,
    interrupt_s: float | None,
    ticks: list[float],
) -> None:
    start = at(start_s)
    t = terms(BillingGranularity.HOUR, price=price, start=start)
    stop = None if stop_s is None else at(stop_s)
    notice = None if interrupt_s is None else Interruption(at(interrupt_s), PREEMPTED, T0)
    horizon = at(3 * 3600)
    run = _life(t, stop, notice, [at(x) for x in ticks], horizon)
    ends = [x for x in (stop, None if notice is None else notice.at) if x is not None]
    end = min(ends) if ends else horizon
    # Every hour begun before the end, the first at the start (none if it ended before).
    hours = 0 if end < start else max(1, -int(-(end - start).total_seconds() // 3600))
    assert run.state.charged_micros == price * hours
    assert all(c.period_start >= start for c in charges(run.actions))
