"""Leases in billing: trades open them, stops and the settlement loop charge and end them.

Every path goes through ``apply``: lock the buyers' available balances (key order), run the
pure lease rules (``gpux_billing.domain.leases.settle``) lease by lease, post every charge and
release in one ledger statement, write the leases back in one statement and put the lease,
ledger and balance events in the outbox, all in the caller's transaction. A lease's charges
have ids ``charge:<lease>:<period>`` and the period's own instant as their time, so a
settlement repeated after a crash posts the same transfers (replays are no-ops).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_billing.adapters import leases as repository
from gpux_billing.domain import transfers
from gpux_billing.domain.fx import NoRate, ToReference, cross
from gpux_billing.domain.leases import (
    Action,
    Charge,
    Ended,
    LowBalance,
    Policy,
    State,
    Terms,
    release_transfer_id,
    settle,
    settlement_order,
)
from gpux_billing.domain.ledger import FxQuote, LedgerError, Transfer
from gpux_billing.handlers import PRODUCER, Wallet, announce, outgoing, post
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseStopRequested,
    LeaseTotals,
)
from gpux_contracts.money import Currency, canonical, from_micros, quantize, to_micros
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import BILLING_LEASES
from gpux_platform.broker import Outgoing
from gpux_platform.metrics import LEASE_EVENTS

__all__ = ["PRODUCER", "apply", "on_rate", "on_stop", "on_trade", "settle_due"]

log = logging.getLogger("gpux.billing.settlement")


@dataclass(frozen=True, slots=True)
class Rules:
    """What settlement needs from the settings."""

    policy: Policy
    settle_every_s: int


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


def _lease_event(
    terms: Terms, payload: Payload, tag: str, cause: Envelope[Any] | None, now: datetime
) -> Outgoing:
    event_id = stable_id("lease", terms.lease_id, tag)
    return outgoing(BILLING_LEASES, terms.lease_id, payload, cause, event_id, now)


def _quote(terms: Terms, rates: Mapping[Currency, ToReference]) -> FxQuote | None:
    if terms.currency is terms.wallet_currency:
        return None
    rate, as_of = cross(dict(rates), terms.currency, terms.wallet_currency)
    assert as_of is not None
    return FxQuote(terms.currency, terms.wallet_currency, rate, as_of)


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
            transfer_id = action.transfer_id(terms.lease_id)
            posted.append(
                transfers.lease_charge(
                    transfer_id,
                    terms.buyer_id,
                    terms.seller_id,
                    terms.currency,
                    action.amount_micros,
                    action.fee_micros,
                    action.paid_micros,
                    action.from_held_micros,
                    action.at,
                    fx=fx,
                    reference=f"lease {terms.lease_id} period {action.period}"[:200],
                )
            )
            payload: Payload = LeaseCharged(
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
            events.append(_lease_event(terms, payload, f"charged:{action.period}", cause, now))
        elif isinstance(action, LowBalance):
            payload = LeaseLowBalance(
                lease_id=terms.lease_id,
                buyer_id=terms.buyer_id,
                wallet_currency=terms.wallet_currency,
                funds=_money(action.funds_micros),
                runway_seconds=action.runway_s,
                as_of=action.at,
            )
            events.append(_lease_event(terms, payload, "low_balance", cause, now))
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
    return _lease_event(terms, payload, "ended", cause, now)


class WaitingForRate(LookupError):
    """A lease across currencies that billing has no rate for yet (fx.rates will bring it)."""


async def apply(
    conn: asyncpg.Connection,
    leases: Sequence[repository.Lease],
    until: datetime,
    rules: Rules,
    cause: Envelope[Any] | None,
    now: datetime,
    stops: Mapping[str, datetime] | None = None,
    opened: Sequence[Outgoing] = (),
) -> list[Wallet]:
    """Settle leases up to ``until`` (stopping those in ``stops``); returns touched wallets.

    A lease across currencies without a rate waits: it is left as it is and due again one
    settlement period later; a stop for it raises ``WaitingForRate`` (so its command is
    delivered again rather than lost).
    """
    if not leases:
        return []
    stops = stops or {}
    rates = await repository.rates(conn)
    quotes: dict[tuple[Currency, Currency], FxQuote | None] = {}
    buyers = [(lease.terms.buyer_id, lease.terms.wallet_currency) for lease in leases]
    available = await repository.lock_available(conn, buyers)
    posted: list[Transfer] = []
    events: list[Outgoing] = list(opened)
    changed: list[tuple[Terms, State]] = []
    waiting: list[str] = []
    touched: set[Wallet] = set()
    ordered = sorted(
        leases, key=lambda x: settlement_order(x.terms.buyer_id, x.terms.started_at, x.id)
    )
    for lease in ordered:
        terms = lease.terms
        pair = (terms.currency, terms.wallet_currency)
        try:
            if pair not in quotes:
                quotes[pair] = _quote(terms, rates)
        except NoRate:
            if lease.id in stops:
                raise WaitingForRate(f"no rate for {pair[0].value} to {pair[1].value}") from None
            waiting.append(lease.id)
            continue
        fx = quotes[pair]
        wallet = (terms.buyer_id, terms.wallet_currency)
        stop_at = stops.get(lease.id)
        outcome = settle(
            terms,
            lease.state,
            available[wallet],
            until,
            None if fx is None else fx.rate,
            rules.policy,
            stop_at,
        )
        available[wallet] = outcome.available_micros
        if outcome.state == lease.state:
            continue
        lease_transfers, lease_events = _effects(terms, outcome.actions, fx, cause, now)
        posted += lease_transfers
        events += lease_events
        if outcome.state.ended:
            events.append(_ended_event(terms, outcome.state, cause, now))
        changed.append((terms, outcome.state))
        if lease_transfers:
            touched.add(wallet)
    if posted:
        await post(conn, posted, cause, now)
    await repository.save(conn, changed)
    await repository.postpone(conn, waiting, now + timedelta(seconds=rules.settle_every_s))
    return await announce(conn, cause, sorted(touched), now, events)


def _terms_of(
    trade: TradeExecuted, wallet_currency: Currency, settle_every_s: int
) -> tuple[Terms, int]:
    price = to_micros(quantize(trade.price_per_gpu_hour))
    terms = Terms(
        trade.trade_id,
        trade.buyer_id,
        trade.seller_id,
        trade.currency,
        wallet_currency,
        price * trade.gpus,
        BillingGranularity(trade.billing),
        trade.executed_at,
        repository.ends_at(trade.executed_at, trade.hours),
        settle_every_s,
    )
    return terms, price


async def on_trade(
    conn: asyncpg.Connection, event: Envelope[TradeExecuted], rules: Rules, now: datetime
) -> list[Wallet]:
    """Open the lease of a trade, with its share of the order's hold as its prepayment."""
    trade = event.payload
    if await repository.exists(conn, trade.trade_id):
        return []  # the same trade again: its share of the hold is taken already
    share = await repository.take_share(conn, trade.order_id, trade.gpus)
    wallet_currency, held = share if share is not None else (trade.currency, 0)
    terms, price = _terms_of(trade, wallet_currency, rules.settle_every_s)
    lease = repository.Lease(
        trade.trade_id,
        trade.order_id,
        trade.offer_id,
        trade.gpu,
        trade.tier,
        trade.gpus,
        price,
        trade.hours,
        terms,
        State(held_micros=held),
    )
    await repository.insert(conn, lease)
    opened = LeaseOpened(
        lease_id=trade.trade_id,
        order_id=trade.order_id,
        offer_id=trade.offer_id,
        buyer_id=trade.buyer_id,
        seller_id=trade.seller_id,
        gpu=trade.gpu,
        tier=trade.tier,
        gpus=trade.gpus,
        price_per_gpu_hour=trade.price_per_gpu_hour,
        currency=trade.currency,
        wallet_currency=wallet_currency,
        billing=BillingGranularity(trade.billing),
        hours=trade.hours,
        started_at=trade.executed_at,
        ends_at=terms.ends_at,
    )
    message = _lease_event(terms, opened, "opened", event, now)
    until = max(now, trade.executed_at)
    # The opening event goes out with the first settlement's (hourly: the first hour).
    return await apply(conn, [lease], until, rules, event, now, opened=[message])


async def on_stop(
    conn: asyncpg.Connection, event: Envelope[LeaseStopRequested], rules: Rules, now: datetime
) -> list[Wallet]:
    """Stop a lease at the time its buyer asked (its final charge exact to the second)."""
    request = event.payload
    lease = await repository.get(conn, request.lease_id)
    if lease is None or lease.terms.buyer_id != request.buyer_id or lease.state.ended:
        return []  # unknown, someone else's, or over already
    stops = {lease.id: request.requested_at}
    # Settle up to the stop even if it lies ahead of this clock: its periods come first.
    return await apply(conn, [lease], max(now, request.requested_at), rules, event, now, stops)


async def settle_due(
    conn: asyncpg.Connection, now: datetime, rules: Rules, limit: int
) -> tuple[int, list[Wallet]]:
    """One batch of the settlement loop: (leases looked at, wallets touched).

    The batch is one savepoint; if the ledger refuses it (a bug, never a normal outcome:
    settlement only charges what the wallet can pay), its leases are settled one by one and
    a lease the ledger still refuses is set aside for a period (logged and counted), so one
    bad lease cannot stop everybody's billing.
    """
    leases = await repository.due(conn, now, limit)
    try:
        async with conn.transaction():
            return len(leases), await apply(conn, leases, now, rules, None, now)
    except LedgerError:
        log.exception("a settlement batch was refused; settling its leases one by one")
    touched: list[Wallet] = []
    for lease in leases:
        try:
            async with conn.transaction():
                touched += await apply(conn, [lease], now, rules, None, now)
        except LedgerError:
            log.exception("lease %s set aside: the ledger refused its settlement", lease.id)
            LEASE_EVENTS.labels("set_aside").inc()
            later = now + timedelta(seconds=rules.settle_every_s)
            await repository.postpone(conn, [lease.id], later)
    return len(leases), touched


async def on_rate(conn: asyncpg.Connection, event: Envelope[RatePublished]) -> list[Wallet]:
    """Keep the latest rate of a currency into EUR (other pairs are not billing's)."""
    rate = event.payload
    if rate.quote is not Currency.EUR or rate.base is Currency.EUR:
        return []
    await repository.record_rate(conn, ToReference(rate.base, rate.rate, rate.as_of))
    return []
