"""The lease rules: periods, cumulative charges, who pays, warnings and ends (pure)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpux_billing.domain.amounts import convert, fee_split
from gpux_billing.domain.leases import (
    Action,
    Charge,
    Ended,
    LowBalance,
    State,
    Terms,
    next_due,
    settle,
)
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency, accrued_micros
from gpux_contracts.offers import BillingGranularity

from .lease_setup import POLICY, RICH, T0, at, charges


def terms(
    billing: BillingGranularity = BillingGranularity.SECOND,
    price: int = 1_000_000,
    currency: Currency = Currency.USD,
    wallet: Currency = Currency.USD,
    ends_at: datetime | None = None,
) -> Terms:
    return Terms("L1", "buyer", "seller", currency, wallet, price, billing, T0, ends_at, 60)


def test_per_second_lease_of_the_issue_bills_exactly_90_seconds() -> None:
    # 2 GPUs at 0.50 USD per GPU-hour, settled at 60 s, stopped at 90 s: 0.025 USD.
    t = terms()
    first = settle(t, State(), RICH, at(75), None, policy=POLICY)
    assert [c.amount_micros for c in charges(first.actions)] == [16_667]
    last = settle(
        t,
        first.state,
        first.available_micros,
        at(95),
        None,
        policy=POLICY,
        stop_at=at(90),
    )
    assert [c.amount_micros for c in charges(last.actions)] == [8_333]
    assert last.state.charged_micros == 25_000
    assert last.state.ended_at == at(90)
    assert last.state.end_reason is LeaseEndReason.STOPPED
    assert last.state.fee_micros == 2_500
    assert last.state.seller_micros == 22_500


def test_per_second_charges_convert_into_the_wallet_currency_at_the_given_rate() -> None:
    t = terms(wallet=Currency.EUR)
    rate = Decimal("0.92")
    out = settle(t, State(), RICH, at(95), rate, policy=POLICY, stop_at=at(90))
    assert out.state.charged_micros == 25_000
    assert out.state.paid_micros == sum(
        convert(c.amount_micros, rate) for c in charges(out.actions)
    )
    assert out.state.paid_micros == convert(16_667, rate) + convert(8_333, rate)
    assert all(c.rate == rate for c in charges(out.actions))


def test_hourly_lease_stopped_after_61_minutes_bills_two_hours() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000)
    opened = settle(t, State(), RICH, T0, None, policy=POLICY)
    assert opened.state.charged_micros == 2_000_000  # the first hour, in advance
    stopped = settle(t, opened.state, RICH, at(3700), None, policy=POLICY, stop_at=at(61 * 60))
    assert stopped.state.charged_micros == 4_000_000
    assert stopped.state.ended_at == at(61 * 60)


def test_hourly_lease_stopped_at_the_hour_bills_one_hour() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000)
    out = settle(t, State(), RICH, at(3600), None, policy=POLICY, stop_at=at(3600))
    assert out.state.charged_micros == 2_000_000


def test_fixed_length_lease_completes_by_itself() -> None:
    t = terms(ends_at=at(150))
    out = settle(t, State(), RICH, at(500), None, policy=POLICY)
    assert out.state.end_reason is LeaseEndReason.COMPLETED
    assert out.state.ended_at == at(150)
    assert out.state.charged_micros == accrued_micros(1_000_000, 150)
    assert next_due(t, out.state) is None


def test_hourly_fixed_length_lease_charges_its_hours_and_completes() -> None:
    t = terms(BillingGranularity.HOUR, price=3_000_000, ends_at=at(2 * 3600))
    out = settle(t, State(), RICH, at(5 * 3600), None, policy=POLICY)
    assert out.state.charged_micros == 6_000_000
    assert out.state.end_reason is LeaseEndReason.COMPLETED


def test_the_prepayment_pays_first_then_the_available_balance() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000)
    state = State(held_micros=1_500_000)
    out = settle(t, state, 10_000_000, T0, None, policy=POLICY)
    (charge,) = charges(out.actions)
    assert charge.from_held_micros == 1_500_000
    assert charge.paid_micros == 2_000_000
    assert out.available_micros == 10_000_000 - 500_000
    assert out.state.held_micros == 0


def test_stopping_releases_what_is_left_of_the_prepayment() -> None:
    t = terms()
    out = settle(t, State(held_micros=1_000_000), 0, at(30), None, policy=POLICY, stop_at=at(30))
    ended = [a for a in out.actions if isinstance(a, Ended)]
    assert ended == [Ended(at(30), LeaseEndReason.STOPPED, 1_000_000 - 8_333)]


def test_running_out_of_money_warns_first_then_ends_insufficient_funds() -> None:
    t = terms(price=3_600_000)  # 1000 micros per second: 60,000 per period
    out = settle(t, State(), 150_000, at(600), None, policy=POLICY)
    kinds = [type(a) for a in out.actions]
    assert kinds == [Charge, LowBalance, Charge, Ended]
    assert out.state.end_reason is LeaseEndReason.INSUFFICIENT_FUNDS
    assert out.state.ended_at == at(120)  # the wallet could not pay a third period
    assert out.available_micros == 30_000
    assert out.state.unpaid_micros == 0


def test_an_hourly_lease_ends_at_the_hour_it_cannot_pay() -> None:
    t = terms(BillingGranularity.HOUR, price=2_000_000)
    opened = settle(t, State(), 3_000_000, T0, None, policy=POLICY)
    assert [type(a) for a in opened.actions] == [Charge, LowBalance]
    later = settle(t, opened.state, opened.available_micros, at(3601), None, policy=POLICY)
    assert later.state.end_reason is LeaseEndReason.INSUFFICIENT_FUNDS
    assert later.state.ended_at == at(3600)
    assert later.state.charged_micros == 2_000_000


def test_a_wallet_emptied_elsewhere_pays_what_it_can_and_the_rest_is_unpaid() -> None:
    t = terms(price=3_600_000)
    out = settle(t, State(warned=True), 20_000, at(60), None, policy=POLICY)
    assert out.state.charged_micros == 20_000
    assert out.state.unpaid_micros == 40_000
    assert out.available_micros == 0
    assert out.state.end_reason is LeaseEndReason.INSUFFICIENT_FUNDS


@settings(max_examples=150, deadline=None)
@given(
    billing=st.sampled_from(list(BillingGranularity)),
    price=st.integers(min_value=1, max_value=50_000_000),
    ticks=st.lists(st.integers(min_value=0, max_value=4 * 3600), max_size=8),
    stop=st.integers(min_value=0, max_value=4 * 3600),
    fx=st.sampled_from([None, Decimal("0.92"), Decimal("1.2712")]),
)
def test_settling_late_or_often_posts_the_same_charges(
    billing: BillingGranularity, price: int, ticks: list[int], stop: int, fx: Decimal | None
) -> None:
    t = terms(billing, price, wallet=Currency.USD if fx is None else Currency.EUR)
    once = settle(t, State(held_micros=5_000), RICH, at(stop), fx, policy=POLICY, stop_at=at(stop))
    state, available = State(held_micros=5_000), RICH
    actions: list[Action] = []
    for tick in sorted(x for x in ticks if x < stop):
        step = settle(t, state, available, at(tick), fx, policy=POLICY)
        state, available = step.state, step.available_micros
        actions += list(step.actions)
    last = settle(t, state, available, at(stop + 5), fx, policy=POLICY, stop_at=at(stop))
    actions += list(last.actions)
    assert charges(tuple(actions)) == charges(once.actions)
    assert last.state == once.state
    assert last.available_micros == once.available_micros
    final = last.state
    elapsed = stop if billing is BillingGranularity.SECOND else max(1, -(-stop // 3600)) * 3600
    assert final.charged_micros == accrued_micros(price, elapsed)
    assert final.fee_micros == fee_split(final.charged_micros, 1000)[1]
    assert final.fee_micros + final.seller_micros == final.charged_micros
    assert final.paid_micros == sum(c.paid_micros for c in charges(tuple(actions)))


@settings(max_examples=150, deadline=None)
@given(
    billing=st.sampled_from(list(BillingGranularity)),
    price=st.integers(min_value=1, max_value=50_000_000),
    available=st.integers(min_value=0, max_value=100_000_000),
    held=st.integers(min_value=0, max_value=10_000_000),
    until=st.integers(min_value=0, max_value=10 * 3600),
)
def test_no_wallet_goes_below_zero_and_money_is_conserved(
    billing: BillingGranularity, price: int, available: int, held: int, until: int
) -> None:
    t = terms(billing, price)
    out = settle(t, State(held_micros=held), available, at(until), None, policy=POLICY)
    paid_from_held = sum(c.from_held_micros for c in charges(out.actions))
    released = sum(a.released_micros for a in out.actions if isinstance(a, Ended))
    assert out.available_micros >= 0
    assert out.state.held_micros >= 0
    assert held == paid_from_held + released + out.state.held_micros
    assert available - out.available_micros == out.state.paid_micros - paid_from_held
    if out.state.end_reason is LeaseEndReason.INSUFFICIENT_FUNDS:
        assert out.state.warned


def test_a_stop_the_wallet_cannot_fully_pay_stays_a_stop_and_records_the_unpaid_part() -> None:
    t = terms(price=3_600_000)  # 1000 micros per second
    out = settle(t, State(warned=False), 20_000, at(40), None, policy=POLICY, stop_at=at(30))
    kinds = [type(a) for a in out.actions]
    assert kinds == [Charge, LowBalance, Ended]
    assert out.state.end_reason is LeaseEndReason.STOPPED
    assert out.state.charged_micros == 20_000
    assert out.state.unpaid_micros == 10_000
    assert out.available_micros == 0


def test_a_charge_carries_its_ledger_time_id_and_the_totals_after_it() -> None:
    hourly = settle(
        terms(BillingGranularity.HOUR, 2_000_000), State(), RICH, T0, None, policy=POLICY
    )
    (first,) = charges(hourly.actions)
    assert first.at == T0  # an hour is charged when it starts
    assert first.transfer_id("L1") == "charge:L1:1"
    assert first.after == hourly.state
    per_second = settle(terms(), State(), RICH, at(61), None, policy=POLICY)
    (minute,) = charges(per_second.actions)
    assert minute.at == at(60)  # a per-second period is charged when it ends
