"""Leases: a trade (market.trades) opens one, a buyer's stop (billing.commands) ends it.

A lease's id is its trade's, so a trade handled twice opens nothing new. It starts at the
trade's ``starts_at`` (GPUs an interrupted lease holds until then), else when the trade was
executed, and nothing is charged before. It takes its fill's share of the order's hold as its
prepayment and, for an hourly lease, pays its first hour at its start (at once, unless the
lease starts later: the settlement loop charges it then); a stop charges up to the instant
the buyer asked for, exact to the second (a stop before the start costs nothing).

Trades are set-based per batch, as order funding is (``service.orders``): ``prepare`` reads
which of the batch's leases exist and its orders' holds (locked) once; each ``on_trade``
decides its trade in turn there (a duplicate opens nothing, a fill takes its share of the hold
as ``domain.funding`` left it) and stages its lease; the unit's commit then calls ``write``:
the leases in one insert, the leased GPUs in one update, and one ``settlement.open_leases``
over them all (one lock, one rate read, one post, one write), in the trades' order. A lease
the book interrupted before its trade came opens with that interruption
(``service.interruptions.opening``).

A trade with a provisioning timeout opens its lease ``provisioning`` (``provisioning_deadline``
on ``lease.opened``): nothing is charged, an hourly lease's first hour included, until the
seller reports it ready (``service.provisioning``); a report that came before the trade is
taken as the lease opens (``service.provisioning.opening``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gpux_billing.domain import reliability as outcomes
from gpux_billing.domain.leases import Lease, State, Terms, ends_at
from gpux_billing.domain.ledger import Wallet
from gpux_billing.domain.provisioning import PendingReport, provisioning_deadline
from gpux_billing.service import interruptions, provisioning
from gpux_billing.service.orders import read_holds
from gpux_billing.service.reliability import stage
from gpux_billing.service.settlement import Opening, lease_event, open_leases, settle
from gpux_billing.service.unit_of_work import BillingUnitOfWork, Staged
from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseOpened, LeaseStopRequested
from gpux_contracts.money import Currency, quantize, to_micros
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.orders import TradeExecuted
from gpux_platform.broker import Outgoing

AS_TRADED = set(LeaseOpened.model_fields) & set(TradeExecuted.model_fields)
"""What ``lease.opened`` tells as its trade has it: the fields both have, by name."""


def started_at(trade: TradeExecuted) -> datetime:
    """When a trade's lease starts: its ``starts_at`` (the GPUs are free then), else at once."""
    return trade.starts_at or trade.executed_at


def _lease_of(
    trade: TradeExecuted, wallet_currency: Currency, held: int, every_s: int, opened_at: datetime
) -> Lease:
    """The lease a trade opens at ``opened_at`` (billing's clock): a provisioning lease's
    deadline counts from its start or from then, whichever is later, so a lagging consumer
    never takes the seller's time (they hear of the lease only once it is opened)."""
    price = to_micros(quantize(trade.price_per_gpu_hour))
    start = started_at(trade)
    terms = Terms(
        trade.trade_id,
        trade.buyer_id,
        trade.seller_id,
        trade.currency,
        wallet_currency,
        price * trade.gpus,
        BillingGranularity(trade.billing),
        start,
        ends_at(start, trade.hours),
        every_s,
    )
    return Lease(
        trade.trade_id,
        trade.order_id,
        trade.offer_id,
        trade.gpu,
        trade.tier,
        trade.gpus,
        price,
        trade.hours,
        terms,
        State(
            held_micros=held,
            provisioning_deadline=provisioning_deadline(
                max(start, opened_at), trade.provisioning_timeout_seconds
            ),
        ),
    )


async def prepare(uow: BillingUnitOfWork, events: Sequence[Envelope[Any]]) -> None:
    """Read what the events' trades are decided from, for those not read yet in this unit:
    which of their leases exist and their orders' holds (locked); one query each."""
    trades = [e.payload for e in events if isinstance(e.payload, TradeExecuted)]
    opened = uow.staged.opened
    unknown = sorted({t.trade_id for t in trades} - opened.keys())
    if unknown:
        found = await uow.leases.existing(unknown)
        opened.update((lease_id, lease_id in found) for lease_id in unknown)
    await read_holds(uow, {t.order_id for t in trades})


async def on_trade(uow: BillingUnitOfWork, event: Envelope[TradeExecuted]) -> None:
    """Open the lease of a trade, with its share of the order's hold as its prepayment."""
    trade = event.payload
    await prepare(uow, [event])  # read already, by the batch's prepare hook
    staged = uow.staged
    if staged.opened[trade.trade_id]:
        return  # the same trade again: its share of the hold is taken already
    staged.opened[trade.trade_id] = True
    taken = staged.funding.lease(trade.order_id, trade.gpus)
    wallet_currency, held = trade.currency, 0  # no hold billing knows: paid from available
    if taken is not None:
        hold, held = taken
        wallet_currency = hold.currency
        staged.leased_gpus[hold.order_id] = hold.leased_gpus
    lease = _lease_of(trade, wallet_currency, held, uow.rules.settle_every_s, uow.now)
    staged.leases.append((lease, event))


def _opening(
    uow: BillingUnitOfWork,
    lease: Lease,
    event: Envelope[TradeExecuted],
    notice: Outgoing | None,
    report: PendingReport | None,
) -> Opening:
    """How a trade's new lease is settled: its first settlement, its ``lease.opened`` first
    (then the notice of an interruption and the ``lease.ready`` of a report that came before
    the trade)."""
    trade = event.payload
    opened = LeaseOpened(
        **trade.model_dump(include=AS_TRADED),
        lease_id=trade.trade_id,
        wallet_currency=lease.terms.wallet_currency,
        started_at=lease.terms.started_at,
        ends_at=lease.terms.ends_at,
        provisioning_deadline=lease.state.provisioning_deadline,
    )
    message = lease_event(lease.terms, opened, "opened", event, uow.now)
    made, ready, failed = provisioning.opening(uow, lease, report, event)
    # Hourly: the first hour at once if the lease has started (the opening event goes out
    # with its charge), else the settlement loop charges it at the start; a provisioning
    # lease pays nothing before it is ready.
    until = max(uow.now, trade.executed_at)
    return Opening(made, until, event, message, notice, ready, failed)


async def write(uow: BillingUnitOfWork, staged: Staged) -> dict[Wallet, Envelope[Any] | None]:
    """Write the leases the unit's trades opened, set-based: the leases in one insert, the
    hold shares in one update, their first settlement in one ``open_leases``. Returns the
    wallets it posted to, each with its last cause (``service.flush`` announces them).

    An interruption the book sent before a trade (kept by ``service.interruptions``) is taken
    here, one statement: its lease opens interrupted, its notice goes out with its opening,
    and a lease whose ``interrupt_at`` has passed ends there as it opens. So are the sellers'
    reports kept by ``service.provisioning`` for its provisioning leases (one statement, none
    when the batch has no lease with a timeout): the lease is stored provisioning, then
    written back ready (one statement for those) or fails as it opens. A provisioning lease
    that opens ready (its report took) counts as ready in time for its seller; one without a
    timeout is not measured."""
    if not staged.leases:
        return {}
    ids = [lease.id for lease, _ in staged.leases]
    pending = await uow.pending_interruptions.take(ids)
    provisioning_ids = [lease.id for lease, _ in staged.leases if lease.state.provisioning]
    reports = await uow.pending_reports.take(provisioning_ids)
    opened = [
        (*interruptions.opening(uow, lease, pending.get(lease.id), e), e)
        for lease, e in staged.leases
    ]
    await uow.leases.add_many([lease for lease, _, _ in opened])
    await uow.holds.set_leased_gpus(staged.leased_gpus)
    openings = [_opening(uow, lease, e, n, reports.get(lease.id)) for lease, n, e in opened]
    for (traded, _), o in zip(staged.leases, openings, strict=True):
        stage(uow, [outcomes.opened(traded, o.lease)], o.cause)
    made_ready = [(o.lease.terms, o.lease.state) for o in openings if o.ready is not None]
    await uow.leases.save(made_ready)
    return await open_leases(uow, openings)


async def on_stop_requested(uow: BillingUnitOfWork, event: Envelope[LeaseStopRequested]) -> None:
    """Stop a lease at the time its buyer asked (its final charge exact to the second)."""
    request = event.payload
    lease = await uow.leases.get(request.lease_id)
    if lease is None or lease.terms.buyer_id != request.buyer_id or lease.state.ended:
        return  # unknown, someone else's, or over already
    stops = {lease.id: request.requested_at}
    # Settle up to the stop even if it lies ahead of this clock: its periods come first.
    await settle(uow, [lease], max(uow.now, request.requested_at), event, stops=stops)
