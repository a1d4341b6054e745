"""Settlement: charging leases for the periods due, and ending those that must end.

Every path (a trade's first hour, a stop, the settlement loop's tick) goes through
``settle``: lock the buyers' available balances (key order), run the pure lease rules
(``gpux_billing.domain.leases.settle``) lease by lease, post every charge and release in one
ledger statement, write the leases back in one statement and queue the lease, ledger and
balance events, all in the caller's unit of work. A lease's charges have ids
``charge:<lease>:<period>`` and the period's own instant as their time, so a settlement
repeated after a crash posts the same transfers (replays are no-ops).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gpux_billing.domain import transfers
from gpux_billing.domain.fx import NoRate, ToReference, cross
from gpux_billing.domain.leases import (
    Action,
    Charge,
    Ended,
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
from gpux_billing.domain.transfers import Payment, Sale
from gpux_billing.service.events import outgoing
from gpux_billing.service.ledger import announce, post
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LeaseCharged, LeaseEnded, LeaseLowBalance, LeaseTotals
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.topics import BILLING_LEASES
from gpux_platform.batches import RetryLater
from gpux_platform.broker import Outgoing

log = logging.getLogger("gpux.billing.settlement")


class WaitingForRate(RetryLater):
    """A stop across currencies that billing has no rate for yet (fx.rates will bring it)."""


@functools.lru_cache(maxsize=1 << 16)
def _money(micros: int) -> Decimal:
    # Pure, and the same amounts recur (a price's charge per period): cached.
    return canonical(from_micros(micros))


def _totals(state: State, started_at: datetime) -> LeaseTotals:
    return LeaseTotals(
        period=state.period,
        charged_through=state.charged_through or started_at,
        total_charged=_money(state.charged_micros),
        total_paid=_money(state.paid_micros),
        total_fee=_money(state.fee_micros),
        total_seller=_money(state.seller_micros),
    )


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


def _charged(terms: Terms, action: Charge, fx: FxQuote | None) -> tuple[Transfer, Payload]:
    """The ledger transfer and the ``lease.charged`` of one charge."""
    transfer_id = action.transfer_id(terms.lease_id)
    transfer = transfers.lease_charge(
        transfer_id,
        Sale(terms.buyer_id, terms.seller_id, terms.currency, action.amount_micros),
        Payment(action.fee_micros, action.paid_micros, action.from_held_micros),
        action.at,
        fx=fx,
        reference=f"lease {terms.lease_id} period {action.period}"[:200],
    )
    payload = LeaseCharged(
        lease_id=terms.lease_id,
        buyer_id=terms.buyer_id,
        seller_id=terms.seller_id,
        transfer_id=transfer_id,
        period_start=action.period_start,
        period_end=action.period_end,
        amount=_money(action.amount_micros),
        currency=terms.currency,
        paid=_money(action.paid_micros),
        wallet_currency=terms.wallet_currency,
        fee=_money(action.fee_micros),
        seller_amount=_money(action.seller_micros),
        fx_rate=None if fx is None else fx.rate,
        fx_rate_at=None if fx is None else fx.rate_at,
        totals=_totals(action.after, terms.started_at),
    )
    return transfer, payload


def _effects(
    terms: Terms,
    actions: Sequence[Action],
    fx: FxQuote | None,
    cause: Envelope[Any] | None,
    now: datetime,
) -> tuple[list[Transfer], list[Outgoing]]:
    """The ledger transfers and lease events of one lease's settlement step."""
    posted: list[Transfer] = []
    events: list[Outgoing] = []
    for action in actions:
        if isinstance(action, Charge):
            transfer, payload = _charged(terms, action, fx)
            posted.append(transfer)
            events.append(lease_event(terms, payload, f"charged:{action.period}", cause, now))
        elif isinstance(action, LowBalance):
            warning = LeaseLowBalance(
                lease_id=terms.lease_id,
                buyer_id=terms.buyer_id,
                wallet_currency=terms.wallet_currency,
                funds=_money(action.funds_micros),
                runway_seconds=action.runway_s,
                as_of=action.at,
            )
            events.append(lease_event(terms, warning, "low_balance", cause, now))
        elif isinstance(action, Ended) and action.released_micros > 0:
            posted.append(
                transfers.release(
                    release_transfer_id(terms.lease_id),
                    terms.buyer_id,
                    terms.wallet_currency,
                    action.released_micros,
                    action.at,
                    reference=f"lease {terms.lease_id} ended"[:200],
                )
            )
    return posted, events


def _ended_event(
    terms: Terms, state: State, cause: Envelope[Any] | None, now: datetime
) -> Outgoing:
    assert state.ended_at is not None
    assert state.end_reason is not None
    payload = LeaseEnded(
        lease_id=terms.lease_id,
        buyer_id=terms.buyer_id,
        seller_id=terms.seller_id,
        reason=state.end_reason,
        ended_at=state.ended_at,
        currency=terms.currency,
        wallet_currency=terms.wallet_currency,
        unpaid=_money(state.unpaid_micros),
        totals=_totals(state, terms.started_at),
    )
    return lease_event(terms, payload, "ended", cause, now)


@dataclass
class _Run:
    """What one ``settle`` call gathers before it writes anything."""

    rates: Mapping[Currency, ToReference]
    available: dict[Wallet, int]
    stops: Mapping[str, datetime]
    quotes: dict[tuple[Currency, Currency], FxQuote | None] = field(default_factory=dict)
    posted: list[Transfer] = field(default_factory=list)
    events: list[Outgoing] = field(default_factory=list)
    changed: list[tuple[Terms, State]] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    touched: set[Wallet] = field(default_factory=set)

    def quote(self, lease: Lease) -> FxQuote | None:
        """The lease's FX quote; ``NoRate`` when a rate is missing (a stop then waits)."""
        terms = lease.terms
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
    run: _Run, lease: Lease, until: datetime, uow: BillingUnitOfWork, cause: Envelope[Any] | None
) -> None:
    """Settle one lease into the run (nothing is written yet)."""
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
    )
    run.available[wallet] = outcome.available_micros
    if outcome.state == lease.state:
        return
    lease_transfers, lease_events = _effects(terms, outcome.actions, fx, cause, uow.now)
    run.posted += lease_transfers
    run.events += lease_events
    if outcome.state.ended:
        run.events.append(_ended_event(terms, outcome.state, cause, uow.now))
    run.changed.append((terms, outcome.state))
    if lease_transfers:
        run.touched.add(wallet)


async def settle(
    uow: BillingUnitOfWork,
    leases: Sequence[Lease],
    until: datetime,
    cause: Envelope[Any] | None,
    *,
    stops: Mapping[str, datetime] | None = None,
    opened: Sequence[Outgoing] = (),
) -> None:
    """Settle leases up to ``until`` (stopping those in ``stops``).

    A lease across currencies without a rate waits: it is left as it is and due again one
    settlement period later; a stop for it raises ``WaitingForRate`` (a ``RetryLater``: its
    command is delivered again rather than lost). Nothing is written before the ledger took
    the whole posting, so a refusal (``LedgerError``) leaves the unit as it was.
    """
    if not leases:
        return
    buyers = [(lease.terms.buyer_id, lease.terms.wallet_currency) for lease in leases]
    run = _Run(await uow.rates.all(), await uow.ledger.lock_available(buyers), stops or {})
    run.events += opened
    ordered = sorted(
        leases, key=lambda x: settlement_order(x.terms.buyer_id, x.terms.started_at, x.id)
    )
    for lease in ordered:
        _step(run, lease, until, uow, cause)
    if run.posted:
        await post(uow, run.posted, cause, isolated=True)
    await uow.leases.save(run.changed)
    await uow.leases.postpone(run.waiting, uow.now + timedelta(seconds=uow.rules.settle_every_s))
    await announce(uow, cause, sorted(run.touched), run.events)


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
    everybody's billing.
    """
    now = uow.now
    leases = await uow.leases.due(now, limit)
    try:
        await settle(uow, leases, now, None)
        return Tick(len(leases))
    except LedgerError:
        log.exception("a settlement batch was refused; settling its leases one by one")
    set_aside = 0
    for lease in leases:
        try:
            await settle(uow, [lease], now, None)
        except LedgerError:
            log.exception("lease %s set aside: the ledger refused its settlement", lease.id)
            set_aside += 1
            later = now + timedelta(seconds=uow.rules.settle_every_s)
            await uow.leases.postpone([lease.id], later)
    return Tick(len(leases), set_aside)
