"""Settlement: charging leases for the periods due, and ending those that must end.

Every path (a trade's first hour, a stop, the settlement loop's tick) goes through
``settle``: lock the buyers' available balances (key order), run the pure lease rules
(``gpux_billing.domain.leases.settle``) lease by lease, post every charge and release in one
ledger statement, write the leases back in one statement and queue the lease, ledger and
balance events, all in the caller's unit of work. A lease's charges have ids
``charge:<lease>:<period>`` and the period's own instant as their time, so a settlement
repeated after a crash posts the same transfers (replays are no-ops).

The loop's batches announce their charges aggregated (``Policy.batched_events``, the
default): per chunk of ``MAX_ITEMS`` leases one ``leases.settled`` (each lease's charges of
the step, summed, with its running totals) and per chunk of transfers one
``ledger.batch_posted``, instead of a ``lease.charged`` and a ``ledger.posted`` per charge;
the items are plain data that the event's model validates once per chunk. A trade's first
hour and a stop (one lease, with a cause whose trace and correlation they carry) keep the
per-lease events, as does a loop configured ``per_lease``. ``lease.opened``,
``lease.low_balance``, ``lease.ended`` and ``balance.changed`` (state per wallet) are per
lease or wallet in every form. So is ``lease.released`` (``capacity.commands``, key: the GPU
id): every lease that ends, whatever the reason and whichever path ended it, gives its GPUs
back to the book in the same transaction as its ``lease.ended``.

A provisioning lease is charged nothing and needs no rate: settling it only ends it (its
deadline passed: ``failed``; a seller's failure report, ``failures``; a stop; an
interruption), releasing its whole prepayment (``domain.leases.settle``). Whichever path
ends a lease ``failed``, the step stages that outcome for its seller's reliability
(``service.reliability``), counted when the unit commits.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from gpux_billing.domain import reliability, transfers
from gpux_billing.domain.fx import NoRate, ToReference, cross
from gpux_billing.domain.leases import (
    Action,
    Charge,
    Ended,
    Failed,
    Lease,
    LowBalance,
    State,
    Terms,
    release_transfer_id,
    settlement_order,
)
from gpux_billing.domain.leases import (
    settle as settle_lease,
)
from gpux_billing.domain.ledger import FxQuote, LedgerError, Transfer, Wallet
from gpux_billing.domain.reliability import Outcome
from gpux_billing.domain.transfers import Payment, Sale
from gpux_billing.service.events import outgoing
from gpux_billing.service.ledger import announce, chunks, money, post, post_each
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.capacity import LeaseReleased
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LeaseCharged, LeaseEnded, LeaseLowBalance, LeaseTotals
from gpux_contracts.money import Currency
from gpux_contracts.offers import Tier
from gpux_contracts.settlement import LeasesSettled
from gpux_contracts.topics import BILLING_LEASES, CAPACITY_COMMANDS
from gpux_platform.batches import RetryLater
from gpux_platform.broker import Outgoing

log = logging.getLogger("gpux.billing.settlement")


class WaitingForRate(RetryLater):
    """A stop across currencies that billing has no rate for yet (fx.rates will bring it)."""


def _parties(terms: Terms) -> dict[str, Any]:
    """What every charge and end of a lease repeats: its ids, parties and currencies."""
    return {
        "lease_id": terms.lease_id,
        "buyer_id": terms.buyer_id,
        "seller_id": terms.seller_id,
        "currency": terms.currency,
        "wallet_currency": terms.wallet_currency,
    }


def _totals(state: State, started_at: datetime) -> dict[str, Any]:
    """A lease's running totals as ``LeaseTotals`` carries them, as plain data."""
    return {
        "period": state.period,
        "charged_through": state.charged_through or started_at,
        "total_charged": money(state.charged_micros),
        "total_paid": money(state.paid_micros),
        "total_fee": money(state.fee_micros),
        "total_seller": money(state.seller_micros),
    }


def lease_event(
    terms: Terms, payload: Payload, tag: str, cause: Envelope[Any] | None, now: datetime
) -> Outgoing:
    """A ``billing.leases`` event of a lease, its id stable per lease and ``tag``."""
    event_id = stable_id("lease", terms.lease_id, tag)
    return outgoing(
        BILLING_LEASES, terms.lease_id, payload, cause=cause, event_id=event_id, now=now
    )


def _quote(terms: Terms, rates: Mapping[Currency, ToReference]) -> FxQuote | None:
    if terms.currency is terms.wallet_currency:
        return None
    rate, as_of = cross(dict(rates), terms.currency, terms.wallet_currency)
    assert as_of is not None
    return FxQuote(terms.currency, terms.wallet_currency, rate, as_of)


def _transfer(terms: Terms, action: Charge, fx: FxQuote | None) -> Transfer:
    """The ledger transfer of one charge."""
    return transfers.lease_charge(
        action.transfer_id(terms.lease_id),
        Sale(terms.buyer_id, terms.seller_id, terms.currency, action.amount_micros),
        Payment(action.fee_micros, action.paid_micros, action.from_held_micros),
        action.at,
        fx=fx,
        reference=f"lease {terms.lease_id} period {action.period}"[:200],
    )


def _charged(terms: Terms, action: Charge, fx: FxQuote | None) -> LeaseCharged:
    """The ``lease.charged`` of one charge (the per-lease form)."""
    return LeaseCharged(
        **_parties(terms),
        transfer_id=action.transfer_id(terms.lease_id),
        period_start=action.period_start,
        period_end=action.period_end,
        amount=money(action.amount_micros),
        paid=money(action.paid_micros),
        fee=money(action.fee_micros),
        seller_amount=money(action.seller_micros),
        fx_rate=None if fx is None else fx.rate,
        fx_rate_at=None if fx is None else fx.rate_at,
        totals=LeaseTotals(**_totals(action.after, terms.started_at)),
    )


def _charges(terms: Terms, charges: Sequence[Charge], fx: FxQuote | None) -> dict[str, Any]:
    """One lease's charges of a step as a ``leases.settled`` item (plain data, summed)."""
    return {
        **_parties(terms),
        "period_start": charges[0].period_start,
        "period_end": charges[-1].period_end,
        "amount": money(sum(c.amount_micros for c in charges)),
        "paid": money(sum(c.paid_micros for c in charges)),
        "fee": money(sum(c.fee_micros for c in charges)),
        "seller_amount": money(sum(c.seller_micros for c in charges)),
        "fx_rate": None if fx is None else fx.rate,
        "fx_rate_at": None if fx is None else fx.rate_at,
        "transfer_ids": [c.transfer_id(terms.lease_id) for c in charges],
        "totals": _totals(charges[-1].after, terms.started_at),
    }


def settled_events(
    items: Sequence[dict[str, Any]], until: datetime, cause: Envelope[Any] | None, now: datetime
) -> list[Outgoing]:
    """The ``leases.settled`` events of a step's charged leases, ``MAX_ITEMS`` a piece.

    Keyed by the chunk's first lease and named by it and the period its charges reached: a
    step that charges a lease always takes it to a period no other step reaches, so the id
    is stable for the same step and never shared by another.
    """
    events = []
    for chunk in chunks(items):
        payload = LeasesSettled.model_validate({"settled_at": until, "leases": chunk})
        first = chunk[0]
        event_id = stable_id("leases.settled", first["lease_id"], str(first["totals"]["period"]))
        events.append(
            outgoing(
                BILLING_LEASES, first["lease_id"], payload, cause=cause, event_id=event_id, now=now
            )
        )
    return events


@dataclass(slots=True)
class _Effects:
    """What one lease's settlement step posts and announces."""

    posted: list[Transfer] = field(default_factory=list)
    events: list[Outgoing] = field(default_factory=list)
    charges: list[Charge] = field(default_factory=list)
    """Its charges, when the run announces them aggregated (else they are in ``events``)."""


def _effects(
    terms: Terms,
    actions: Sequence[Action],
    fx: FxQuote | None,
    *,
    batched: bool,
    cause: Envelope[Any] | None,
    now: datetime,
) -> _Effects:
    """The ledger transfers and lease events of one lease's settlement step (its per-lease
    events in the trace of ``cause``)."""
    found = _Effects()
    for action in actions:
        if isinstance(action, Charge):
            found.posted.append(_transfer(terms, action, fx))
            if batched:
                found.charges.append(action)
            else:
                payload = _charged(terms, action, fx)
                found.events.append(
                    lease_event(terms, payload, f"charged:{action.period}", cause, now)
                )
        elif isinstance(action, LowBalance):
            warning = LeaseLowBalance(
                lease_id=terms.lease_id,
                buyer_id=terms.buyer_id,
                wallet_currency=terms.wallet_currency,
                funds=money(action.funds_micros),
                runway_seconds=action.runway_s,
                as_of=action.at,
            )
            found.events.append(lease_event(terms, warning, "low_balance", cause, now))
        elif isinstance(action, Ended) and action.released_micros > 0:
            found.posted.append(
                transfers.release(
                    release_transfer_id(terms.lease_id),
                    terms.buyer_id,
                    terms.wallet_currency,
                    action.released_micros,
                    action.at,
                    reference=f"lease {terms.lease_id} ended"[:200],
                )
            )
    return found


def _end_events(
    lease: Lease, state: State, cause: Envelope[Any] | None, now: datetime
) -> list[Outgoing]:
    """The events of an ended lease: its ``lease.ended``, and its ``lease.released``, which
    gives its GPUs back to its offer in the book."""
    assert state.ended_at is not None
    assert state.end_reason is not None
    terms = lease.terms
    ended = LeaseEnded(
        **_parties(terms),
        reason=state.end_reason,
        ended_at=state.ended_at,
        unpaid=money(state.unpaid_micros),
        totals=LeaseTotals(**_totals(state, terms.started_at)),
        failure=state.failure,
        detail=state.failure_detail,
    )
    released = LeaseReleased(
        lease_id=lease.id,
        offer_id=lease.offer_id,
        gpu=lease.gpu,
        gpus=lease.gpus,
        tier=Tier(lease.tier),
        reason=state.end_reason,
        ended_at=state.ended_at,
    )
    event_id = stable_id("lease", lease.id, "released")
    return [
        lease_event(terms, ended, "ended", cause, now),
        outgoing(CAPACITY_COMMANDS, lease.gpu, released, cause=cause, event_id=event_id, now=now),
    ]


@dataclass
class _Run:
    """What one ``settle`` call gathers before it writes anything."""

    rates: Mapping[Currency, ToReference]
    available: dict[Wallet, int]
    stops: Mapping[str, datetime]
    failures: Mapping[str, Failed]
    """Sellers' failure reports of provisioning leases, by lease id."""
    batched: bool
    """Announce charges and transfers aggregated (the settlement loop's batches)."""
    quotes: dict[tuple[Currency, Currency], FxQuote | None] = field(default_factory=dict)
    posted: list[tuple[Transfer, Envelope[Any] | None]] = field(default_factory=list)
    """The transfers to post, each with the event that caused it."""
    events: list[Outgoing] = field(default_factory=list)
    changed: list[tuple[Terms, State]] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    touched: dict[Wallet, Envelope[Any] | None] = field(default_factory=dict)
    """The wallets posted to, each with the last event that changed it."""
    settled: list[dict[str, Any]] = field(default_factory=list)
    """``leases.settled`` items, when ``batched``."""
    outcomes: list[tuple[Outcome, Envelope[Any] | None]] = field(default_factory=list)
    """The leases it ended ``failed``, for their sellers' reliability."""

    def quote(self, lease: Lease) -> FxQuote | None:
        """The lease's FX quote; ``NoRate`` when a rate is missing (a stop then waits). A
        provisioning lease is charged nothing: it needs none."""
        terms = lease.terms
        if lease.state.provisioning:
            return None
        pair = (terms.currency, terms.wallet_currency)
        try:
            if pair not in self.quotes:
                self.quotes[pair] = _quote(terms, self.rates)
        except NoRate:
            if lease.id in self.stops:
                raise WaitingForRate(f"no rate for {pair[0].value} to {pair[1].value}") from None
            raise
        return self.quotes[pair]


def _step(
    run: _Run, lease: Lease, until: datetime, cause: Envelope[Any] | None, uow: BillingUnitOfWork
) -> None:
    """Settle one lease into the run, in the trace of ``cause`` (nothing is written yet)."""
    try:
        fx = run.quote(lease)
    except NoRate:
        run.waiting.append(lease.id)
        return
    terms = lease.terms
    wallet = (terms.buyer_id, terms.wallet_currency)
    outcome = settle_lease(
        terms,
        lease.state,
        run.available[wallet],
        until,
        None if fx is None else fx.rate,
        policy=uow.rules.lease,
        stop_at=run.stops.get(lease.id),
        failed=run.failures.get(lease.id),
    )
    # What an end gives back of the prepayment is available to the wallet's next lease, as it
    # would be to a settlement after this one's posting.
    released = sum(a.released_micros for a in outcome.actions if isinstance(a, Ended))
    run.available[wallet] = outcome.available_micros + released
    if outcome.state == lease.state:
        return
    found = _effects(terms, outcome.actions, fx, batched=run.batched, cause=cause, now=uow.now)
    run.posted += [(t, cause) for t in found.posted]
    if found.charges:
        run.settled.append(_charges(terms, found.charges, fx))
    run.events += found.events
    if outcome.state.ended:
        run.events += _end_events(lease, outcome.state, cause, uow.now)
        failed = reliability.settled(lease, outcome.state)
        if failed is not None:
            run.outcomes.append((failed, cause))
    run.changed.append((terms, outcome.state))
    if found.posted:
        run.touched[wallet] = cause


async def _begin(
    uow: BillingUnitOfWork,
    leases: Sequence[Lease],
    stops: Mapping[str, datetime] | None,
    batched: bool,
    failures: Mapping[str, Failed] | None = None,
) -> _Run:
    """A run over these leases: their buyers' available balances locked (key order), the rates."""
    buyers = [(lease.terms.buyer_id, lease.terms.wallet_currency) for lease in leases]
    available = await uow.ledger.lock_available(buyers)
    return _Run(await uow.rates.all(), available, stops or {}, failures or {}, batched)


async def _write(uow: BillingUnitOfWork, run: _Run, cause: Envelope[Any] | None) -> None:
    """Post the run's transfers (one statement), write its leases back (one), postpone those
    waiting for a rate; the ledger events go to the outbox, the leases it failed to the unit's
    reliability counts (once it all took: a refused posting counts nothing)."""
    if run.posted:
        if run.batched:
            transfers = [t for t, _ in run.posted]
            await post(uow, transfers, cause, isolated=True, batched=True)
        else:
            await post_each(uow, run.posted, isolated=True)
    await uow.leases.save(run.changed)
    await uow.leases.postpone(run.waiting, uow.now + timedelta(seconds=uow.rules.settle_every_s))
    uow.staged.outcomes += run.outcomes


async def settle(
    uow: BillingUnitOfWork,
    leases: Sequence[Lease],
    until: datetime,
    cause: Envelope[Any] | None,
    *,
    stops: Mapping[str, datetime] | None = None,
    batched: bool = False,
    failures: Mapping[str, Failed] | None = None,
) -> None:
    """Settle leases up to ``until`` (stopping those in ``stops``, failing the provisioning
    ones in ``failures``).

    A lease across currencies without a rate waits: it is left as it is and due again one
    settlement period later; a stop for it raises ``WaitingForRate`` (a ``RetryLater``: its
    command is delivered again rather than lost). Nothing is written before the ledger took
    the whole posting, so a refusal (``LedgerError``) leaves the unit as it was. ``batched``:
    announce the charges and transfers aggregated (``leases.settled``, ``ledger.batch_posted``).
    """
    if not leases:
        return
    run = await _begin(uow, leases, stops, batched, failures)
    ordered = sorted(
        leases, key=lambda x: settlement_order(x.terms.buyer_id, x.terms.started_at, x.id)
    )
    for lease in ordered:
        _step(run, lease, until, cause, uow)
    await _write(uow, run, cause)
    settled = settled_events(run.settled, until, cause, uow.now)
    await announce(uow, run.touched, [*settled, *run.events])


@dataclass(frozen=True, slots=True)
class Opening:
    """A lease its trade opens: settled up to ``until`` in the trace of its trade, its
    ``lease.opened`` announced first."""

    lease: Lease
    until: datetime
    cause: Envelope[Any]
    opened: Outgoing
    notice: Outgoing | None = None
    """The ``lease.interruption_notice`` of an interruption that came before the trade."""
    ready: Outgoing | None = None
    """The ``lease.ready`` of a seller's ready report that came before the trade (``lease``
    is then ready already)."""
    failed: Failed | None = None
    """A seller's failure report that came before the trade: the lease fails as it opens."""


async def open_leases(
    uow: BillingUnitOfWork, openings: Sequence[Opening]
) -> dict[Wallet, Envelope[Any] | None]:
    """Settle new leases as their trades open them, in the trades' order (so a wallet pays
    them as it would one trade after the other), with one lock, one rate read, one post and
    one write for all; each lease's events are per lease, in its trade's trace. Returns the
    wallets it posted to, each with its last cause: the caller announces them with the rest
    of its unit's."""
    if not openings:
        return {}
    failures = {o.lease.id: o.failed for o in openings if o.failed is not None}
    run = await _begin(uow, [o.lease for o in openings], None, False, failures)
    for opening in openings:
        run.events.append(opening.opened)
        run.events += [e for e in (opening.notice, opening.ready) if e is not None]
        _step(run, opening.lease, opening.until, opening.cause, uow)
    await _write(uow, run, None)
    uow.outbox.add(*run.events)
    return run.touched


@dataclass(frozen=True, slots=True)
class Tick:
    """What one batch of the settlement loop did."""

    looked_at: int
    set_aside: int = 0
    """Leases the ledger refused even alone (postponed a period, for a person to look at)."""


async def settle_due(uow: BillingUnitOfWork, limit: int) -> Tick:
    """One batch of the settlement loop: the leases due by the unit's time, oldest first.

    If the ledger refuses the batch (a bug, never a normal outcome: settlement only charges
    what the wallet can pay), its leases are settled one by one and a lease the ledger still
    refuses is set aside for a period (logged and counted), so one bad lease cannot stop
    everybody's billing. Its charges are announced aggregated unless the rules say
    ``per_lease`` (``Policy.batched_events``).
    """
    now = uow.now
    batched = uow.rules.lease.batched_events
    leases = await uow.leases.due(now, limit)
    try:
        await settle(uow, leases, now, None, batched=batched)
        return Tick(len(leases))
    except LedgerError:
        log.exception("a settlement batch was refused; settling its leases one by one")
    set_aside = 0
    for lease in leases:
        try:
            await settle(uow, [lease], now, None, batched=batched)
        except LedgerError:
            log.exception("lease %s set aside: the ledger refused its settlement", lease.id)
            set_aside += 1
            later = now + timedelta(seconds=uow.rules.settle_every_s)
            await uow.leases.postpone([lease.id], later)
    return Tick(len(leases), set_aside)
