"""Leases: which periods are due, what each costs, who pays it, and when a lease ends (pure).

A lease is cut into periods from its start (``started_at``: its trade's ``starts_at``, else
when it was executed; nothing is charged before it). Hourly leases have one-hour periods
charged at their start (each started hour, in advance: the first one at the lease's start, so
a lease sold ahead of its start pays nothing until then); per-second leases have periods of
``settle_every_s`` charged at their end, for the whole seconds elapsed. Charges are
cumulative: period k costs ``target(k) - target(k-1)``, where ``target`` is the price of the
hours started (hourly) or ``accrued_micros`` of the seconds elapsed (per second), so rounding
never accumulates. The platform fee is cumulative the same way. Periods, their bounds and
amounts depend only on the lease and the instant a stop or end takes effect, never on when
a settlement happened to run: a late or repeated settlement posts the same transfers.

The buyer pays each charge from the lease's prepayment (its share of the order's hold) first,
then from its available balance; when the offer's currency differs from the wallet's, the
amount is converted at the rate given with the charge. A lease ends when it is stopped, when
its fixed length runs out, when it reaches the ``interrupt_at`` of its interruption
(``interrupted``: charged exactly to that instant, as a stop then would be), or when the
wallet cannot pay the next period (``insufficient_funds``), after a low-balance warning when
the funds last less than the runway. A lease never ends before its start: one stopped (or
found unable to pay) before it ends at its start, having cost nothing. Nothing here reads a
clock: instants come in as arguments.

A lease whose offer has a provisioning timeout opens ``provisioning`` (``State.
provisioning_deadline`` set): nothing is charged and its prepayment stays held until it is
ready (``domain.provisioning.ready`` restarts its terms at ``ready_at``, so it is charged from
then exactly as a lease starting at ``ready_at``). While it provisions, settlement only ends
it: a seller's failure report or its deadline (``failed``), a stop (``stopped``), an
interruption (``interrupted``), whichever comes first, charging nothing and releasing the
whole prepayment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from gpux_billing.domain.amounts import convert, fee_split
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason, LeaseFailure
from gpux_contracts.money import Currency, accrued_micros
from gpux_contracts.offers import BillingGranularity

HOUR_S = 3600


@dataclass(frozen=True, slots=True)
class Terms:
    """What a lease was traded at; fixed for its life."""

    lease_id: str
    buyer_id: str
    seller_id: str
    currency: Currency
    """The offer's currency: prices, charges and the seller's earnings are in it."""
    wallet_currency: Currency
    """The buyer pays from this wallet."""
    price_micros_per_hour: int
    """For all the lease's GPUs (price per GPU-hour × GPUs), in micro-units of ``currency``."""
    billing: BillingGranularity
    started_at: datetime
    ends_at: datetime | None
    """Fixed-length leases end here by themselves; None = until stopped."""
    settle_every_s: int = 60
    """Length of a per-second lease's settlement period."""

    @property
    def period_s(self) -> int:
        """Seconds per period: an hour, or the settlement period of a per-second lease."""
        return HOUR_S if self.billing is BillingGranularity.HOUR else self.settle_every_s

    def period_bounds(self, k: int) -> tuple[datetime, datetime]:
        """Where period ``k`` (1-based) starts and ends (a fixed end cuts the last one)."""
        start = self.started_at + timedelta(seconds=(k - 1) * self.period_s)
        end = self.started_at + timedelta(seconds=k * self.period_s)
        if self.ends_at is not None and end > self.ends_at:
            end = self.ends_at
        return start, end

    def target_micros(self, k: int, end: datetime | None = None) -> int:
        """What the lease owes in total once period ``k`` is charged (ending at ``end``)."""
        if self.billing is BillingGranularity.HOUR:
            return self.price_micros_per_hour * k
        stop = self.period_bounds(k)[1] if end is None else end
        return accrued_micros(self.price_micros_per_hour, whole_seconds(self.started_at, stop))


@dataclass(frozen=True, slots=True)
class Interruption:
    """The book's notice that an interruptible lease ends at ``at``."""

    at: datetime
    """The lease ends here (``interrupted``), charged exactly to it."""
    cause: InterruptionCause
    noticed_at: datetime
    """When the book decided (the notice runs from here to ``at``)."""


@dataclass(frozen=True, slots=True)
class State:
    """Where a lease stands: what it has paid, and what is left of its prepayment."""

    period: int = 0
    """Periods charged so far."""
    charged_through: datetime | None = None
    """The lease is paid up to here (None before the first charge)."""
    charged_micros: int = 0
    """Cumulative, in the offer's currency."""
    paid_micros: int = 0
    """Cumulative, in the wallet's currency."""
    fee_micros: int = 0
    seller_micros: int = 0
    held_micros: int = 0
    """What is left of the lease's prepayment in the buyer's held balance (wallet currency)."""
    unpaid_micros: int = 0
    """Delivered time the wallet could not pay (offer currency), written off at the end."""
    warned: bool = False
    ended_at: datetime | None = None
    end_reason: LeaseEndReason | None = None
    interruption: Interruption | None = None
    """Set once, when the book interrupts the lease; it ends at ``interruption.at``."""
    provisioning_deadline: datetime | None = None
    """While the lease provisions (and once it failed): when it fails unless ready first.
    None: ready, charged from ``Terms.started_at``."""
    failure: LeaseFailure | None = None
    """Why a lease that ended ``failed`` never became ready."""
    failure_detail: str = ""
    """The seller's words, when it reported the failure."""

    @property
    def ended(self) -> bool:
        """Whether the lease has ended."""
        return self.ended_at is not None

    @property
    def provisioning(self) -> bool:
        """Whether the lease waits for its seller's access (nothing is charged meanwhile)."""
        return self.provisioning_deadline is not None and not self.ended


@dataclass(frozen=True, slots=True)
class Failed:
    """A seller's report that a provisioning lease cannot be delivered."""

    at: datetime
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Charge:
    """One period charged: ``amount`` (offer currency) of which the buyer paid ``paid``."""

    period: int
    period_start: datetime
    period_end: datetime
    amount_micros: int
    paid_micros: int
    """In the wallet's currency; ``from_held`` of it came from the lease's prepayment."""
    from_held_micros: int
    fee_micros: int
    seller_micros: int
    rate: Decimal | None
    """Offer currency to wallet currency; None when they are the same."""
    at: datetime
    """The charge's time on the ledger: its period's start (hourly) or end (per second)."""
    after: State
    """The lease once this charge is paid (its running totals)."""

    def transfer_id(self, lease_id: str) -> str:
        """The ledger transfer of this charge: one per lease and period, whenever posted."""
        return f"charge:{lease_id}:{self.period}"


def release_transfer_id(lease_id: str) -> str:
    """The ledger transfer that gives back what is left of a lease's prepayment."""
    return f"release:lease:{lease_id}"


def settlement_order(
    buyer_id: str, started_at: datetime, lease_id: str
) -> tuple[str, datetime, str]:
    """Leases sharing a wallet are settled in this order: the oldest pays first."""
    return buyer_id, started_at, lease_id


@dataclass(frozen=True, slots=True)
class LowBalance:
    """The wallet covers less than the runway at this lease's rate."""

    funds_micros: int
    runway_s: int
    at: datetime


@dataclass(frozen=True, slots=True)
class Ended:
    """The lease ended; ``released_micros`` of its prepayment goes back to available."""

    at: datetime
    reason: LeaseEndReason
    released_micros: int


Action = Charge | LowBalance | Ended


@dataclass(frozen=True, slots=True)
class Policy:
    """The operator's settings that settlement applies."""

    fee_bps: int = 1000
    """The platform's fee in basis points of each charge (10 %)."""
    runway_s: int = HOUR_S
    """Warn when the wallet lasts less than this at the lease's rate."""
    batched_events: bool = True
    """Whether the settlement loop announces a batch's charges and transfers aggregated
    (``leases.settled``, ``ledger.batch_posted``) rather than one event per charge (the rules
    are the same either way; only the form of their announcement differs)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A settlement step of one lease: its new state, what happened, the wallet after it."""

    state: State
    actions: tuple[Action, ...]
    available_micros: int


def whole_seconds(start: datetime, end: datetime) -> int:
    """Whole seconds from ``start`` to ``end`` (a started second is not billed; never < 0)."""
    delta = end - start
    return max(delta.days * 86_400 + delta.seconds, 0)


def next_due(terms: Terms, state: State) -> datetime | None:
    """When the lease next needs settling: its next charge, its fixed end or its interruption,
    whichever comes first (None: ended)."""
    if state.ended:
        return None
    if state.provisioning_deadline is not None:
        due = state.provisioning_deadline
        return due if state.interruption is None else min(due, state.interruption.at)
    k = state.period + 1
    start, end = terms.period_bounds(k)
    if terms.ends_at is not None and start >= terms.ends_at:
        due = terms.ends_at
    else:
        due = start if terms.billing is BillingGranularity.HOUR else end
    if state.interruption is not None:
        due = min(due, state.interruption.at)
    return due


def _paid(amount_micros: int, rate: Decimal | None) -> int:
    return amount_micros if rate is None else convert(amount_micros, rate)


def affordable_micros(amount_micros: int, funds_micros: int, rate: Decimal | None) -> int:
    """The largest part of ``amount_micros`` whose converted price fits in ``funds_micros``."""
    if funds_micros <= 0:
        return 0
    if rate is None:
        return min(amount_micros, funds_micros)
    low, high = 0, amount_micros
    while low < high:  # convert() is monotonic: bisect for the largest amount that fits
        middle = (low + high + 1) // 2
        if convert(middle, rate) <= funds_micros:
            low = middle
        else:
            high = middle - 1
    return low


class _Step:
    """Mutable working copy of one lease's settlement (kept local to ``settle``)."""

    def __init__(self, terms: Terms, state: State, available: int, policy: Policy) -> None:
        self.terms = terms
        self.state = state
        self.available = available
        self.policy = policy
        self.actions: list[Action] = []

    @property
    def funds(self) -> int:
        return self.state.held_micros + self.available

    def charge(
        self, k: int, start: datetime, end: datetime, target: int, rate: Decimal | None
    ) -> bool:
        """Charge period ``k`` up to ``target``; False when only part of it could be paid."""
        s = self.state
        amount = target - s.charged_micros
        whole = True
        if _paid(amount, rate) > self.funds:
            amount = affordable_micros(amount, self.funds, rate)
            whole = False
        unpaid = target - s.charged_micros - amount
        paid = _paid(amount, rate)
        from_held = min(paid, s.held_micros)
        _, fee_before = fee_split(s.charged_micros, self.policy.fee_bps)
        _, fee_after = fee_split(s.charged_micros + amount, self.policy.fee_bps)
        fee = fee_after - fee_before
        self.available -= paid - from_held
        self.state = replace(
            s,
            period=k,
            charged_through=end,
            charged_micros=s.charged_micros + amount,
            paid_micros=s.paid_micros + paid,
            fee_micros=s.fee_micros + fee,
            seller_micros=s.seller_micros + amount - fee,
            held_micros=s.held_micros - from_held,
            unpaid_micros=s.unpaid_micros + unpaid,
        )
        if amount > 0:
            hourly = self.terms.billing is BillingGranularity.HOUR
            at = start if hourly else end
            charge = Charge(
                k, start, end, amount, paid, from_held, fee, amount - fee, rate, at, self.state
            )
            self.actions.append(charge)
        return whole

    def outcome(self) -> Outcome:
        """Where the step leaves the lease and the wallet."""
        return Outcome(self.state, tuple(self.actions), self.available)

    def end(self, at: datetime, reason: LeaseEndReason) -> None:
        released = self.state.held_micros
        self.state = replace(self.state, held_micros=0, ended_at=at, end_reason=reason)
        self.actions.append(Ended(at, reason, released))

    def warn_if_short(self, at: datetime, rate: Decimal | None) -> None:
        """Warn once when the funds pay for less than the runway of this lease.

        The funds count, not time already paid in advance: an hourly lease is warned right
        after the charge of its last affordable hour, up to an hour before it ends.
        """
        if self.state.warned:
            return
        burn = _paid(self.terms.price_micros_per_hour, rate)  # wallet micros per hour
        if burn == 0:
            return
        lasts = self.funds * HOUR_S // burn
        if lasts < self.policy.runway_s:
            ahead = 0
            if self.state.charged_through is not None and self.state.charged_through > at:
                ahead = whole_seconds(at, self.state.charged_through)  # paid in advance
            self.state = replace(self.state, warned=True)
            self.actions.append(LowBalance(self.funds, ahead + lasts, at))


def settle(
    terms: Terms,
    state: State,
    available_micros: int,
    until: datetime,
    rate: Decimal | None,
    *,
    policy: Policy,
    stop_at: datetime | None = None,
    failed: Failed | None = None,
) -> Outcome:
    """Charge every period due by ``until``, then end the lease if it must end.

    ``available_micros`` is the buyer's available balance in the wallet currency before
    this lease's charges; ``rate`` converts the offer's currency into the wallet's (None:
    the same currency). ``stop_at`` stops the lease then (a per-second lease: or at its
    last settled instant if that is later; charged time is never taken back). A
    fixed-length lease ends at ``ends_at``, and an interrupted one at its interruption's
    ``at`` (as a stop then would), once ``until`` reaches it. A provisioning lease is charged
    nothing: it only ends (``_end_provisioning``), ``failed`` by a seller's report or its
    deadline, stopped or interrupted; no rate is needed for it.
    """
    if state.provisioning:
        return _end_provisioning(
            terms, state, available_micros, until, stop_at=stop_at, failed=failed
        )
    if (terms.currency is terms.wallet_currency) != (rate is None):
        raise ValueError("a rate is needed exactly when the currencies differ")
    step = _Step(terms, state, available_micros, policy)
    if state.ended:
        return Outcome(state, (), available_micros)
    ending = _ending(state, until, stop_at)
    limit = until if ending is None else min(until, ending)
    if not _charge_due_periods(step, limit, rate):
        return step.outcome()
    finish = _finish(terms, step.state, until, stop_at)
    if finish is not None:
        _end(step, finish, rate)
    elif step.state.period == 0 and terms.billing is not BillingGranularity.HOUR:
        # A per-second lease that cannot pay its first period ends before it starts.
        step.warn_if_short(terms.started_at, rate)
        if _cannot_pay_next(terms, step, rate):
            step.end(terms.started_at, LeaseEndReason.INSUFFICIENT_FUNDS)
    return step.outcome()


def _ending(state: State, until: datetime, stop_at: datetime | None) -> datetime | None:
    """The instant a stop or an interruption ends the lease at, if it does by ``until``."""
    ends = [] if stop_at is None else [stop_at]
    if state.interruption is not None and state.interruption.at <= until:
        ends.append(state.interruption.at)
    return min(ends) if ends else None


def _due(terms: Terms, k: int, limit: datetime) -> bool | None:
    """Whether period ``k`` is due by ``limit`` (None: the lease's fixed length is used up)."""
    start, end = terms.period_bounds(k)
    if terms.ends_at is not None and start >= terms.ends_at:
        return None
    if terms.billing is BillingGranularity.HOUR:
        # The first hour is due at the lease's start (not before: a lease sold ahead of its
        # start pays nothing until then), each later one once it has begun.
        return start < limit if k > 1 else start <= limit
    return end <= limit


def _charge_due_periods(step: _Step, limit: datetime, rate: Decimal | None) -> bool:
    """Charge every period due by ``limit``; False when the lease ended for want of funds."""
    while _due(step.terms, step.state.period + 1, limit):
        if not _charge_period(step, step.state.period + 1, rate):
            return False
    return True


def _charge_period(step: _Step, k: int, rate: Decimal | None) -> bool:
    """Charge period ``k``; False when the wallet could not pay it and the lease ended."""
    terms = step.terms
    hourly = terms.billing is BillingGranularity.HOUR
    start, end = terms.period_bounds(k)
    if hourly and _paid(terms.target_micros(k) - step.state.charged_micros, rate) > step.funds:
        step.warn_if_short(start, rate)
        step.end(start, LeaseEndReason.INSUFFICIENT_FUNDS)  # the paid hours are used up
        return False
    if not step.charge(k, start, end, terms.target_micros(k), rate):
        step.warn_if_short(end, rate)
        step.end(end, LeaseEndReason.INSUFFICIENT_FUNDS)
        return False
    step.warn_if_short(start if hourly else end, rate)
    if not hourly and _cannot_pay_next(terms, step, rate):
        step.end(end, LeaseEndReason.INSUFFICIENT_FUNDS)
        return False
    return True


def _end(step: _Step, finish: tuple[datetime, LeaseEndReason], rate: Decimal | None) -> None:
    """End the lease at a stop or its fixed end; a per-second lease pays its last, partial
    period exact to the second."""
    terms = step.terms
    at, reason = finish
    if terms.billing is not BillingGranularity.HOUR:
        k = step.state.period + 1
        start = terms.period_bounds(k)[0]
        if at > start and not step.charge(k, start, at, terms.target_micros(k, at), rate):
            step.warn_if_short(at, rate)  # the wallet fell short; `unpaid` records how much
    step.end(at, reason)


def _cannot_pay_next(terms: Terms, step: _Step, rate: Decimal | None) -> bool:
    """Whether the wallet falls short of the next full period (end now rather than deliver it)."""
    following = terms.target_micros(step.state.period + 1) - step.state.charged_micros
    return _paid(following, rate) > step.funds


def _finish(
    terms: Terms, state: State, until: datetime, stop_at: datetime | None
) -> tuple[datetime, LeaseEndReason] | None:
    """Whether the lease ends now, and when: a stop, its fixed length run out, or its
    interruption. A tie goes to the first of these (a buyer's stop at ``interrupt_at`` is a
    stop; a fixed length that runs out then, completed)."""
    settled = state.charged_through if terms.billing is BillingGranularity.SECOND else None

    def effective(at: datetime) -> datetime:
        # Never before the start, nor before what a per-second lease has already paid for.
        return max(at, settled or at, terms.started_at)

    candidates: list[tuple[datetime, LeaseEndReason]] = []
    if stop_at is not None:
        candidates.append((effective(stop_at), LeaseEndReason.STOPPED))
    if terms.ends_at is not None and terms.ends_at <= until:
        candidates.append((terms.ends_at, LeaseEndReason.COMPLETED))
    interruption = state.interruption
    if interruption is not None and interruption.at <= until:
        candidates.append((effective(interruption.at), LeaseEndReason.INTERRUPTED))
    return min(candidates, key=lambda c: c[0]) if candidates else None


def _end_provisioning(
    terms: Terms,
    state: State,
    available_micros: int,
    until: datetime,
    *,
    stop_at: datetime | None,
    failed: Failed | None,
) -> Outcome:
    """End a provisioning lease if anything ends it by ``until``, the earliest first (a tie
    goes to the first: a stop, the seller's report, the deadline, an interruption), never
    before its start; nothing is charged and its whole prepayment is released."""
    start = terms.started_at
    deadline = state.provisioning_deadline
    assert deadline is not None
    candidates: list[tuple[datetime, LeaseEndReason, LeaseFailure | None, str]] = []
    if stop_at is not None:
        candidates.append((max(stop_at, start), LeaseEndReason.STOPPED, None, ""))
    if failed is not None:
        reported = (max(failed.at, start), LeaseEndReason.FAILED, LeaseFailure.SELLER_REPORTED)
        candidates.append((*reported, failed.detail))
    if deadline <= until:
        timeout = (deadline, LeaseEndReason.FAILED, LeaseFailure.PROVISIONING_TIMEOUT)
        candidates.append((*timeout, ""))
    if state.interruption is not None and state.interruption.at <= until:
        at = max(state.interruption.at, start)
        candidates.append((at, LeaseEndReason.INTERRUPTED, None, ""))
    if not candidates:
        return Outcome(state, (), available_micros)
    at, reason, failure, detail = min(candidates, key=lambda c: c[0])
    released = state.held_micros
    ended = replace(
        state,
        held_micros=0,
        ended_at=at,
        end_reason=reason,
        failure=failure,
        failure_detail=detail,
    )
    return Outcome(ended, (Ended(at, reason, released),), available_micros)


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as billing keeps it: what it was traded at, its terms, and its state."""

    id: str
    order_id: str
    offer_id: str
    gpu: str
    tier: str
    gpus: int
    price_micros_per_gpu_hour: int
    hours: int | None
    terms: Terms
    state: State


def ends_at(started_at: datetime, hours: int | None) -> datetime | None:
    """A fixed-length lease's end (None: it runs until stopped)."""
    return None if hours is None else started_at + timedelta(hours=hours)
