"""Leases: a trade (market.trades) opens one, a buyer's stop (billing.commands) ends it.

A lease's id is its trade's, so a trade handled twice opens nothing new. It takes its fill's
share of the order's hold as its prepayment and, for an hourly lease, pays its first hour
at once; a stop charges up to the instant the buyer asked for, exact to the second.
"""

from __future__ import annotations

from gpux_billing.domain import holds
from gpux_billing.domain.leases import Lease, State, Terms, ends_at
from gpux_billing.service.settlement import lease_event, settle
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseOpened, LeaseStopRequested
from gpux_contracts.money import Currency, quantize, to_micros
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.orders import TradeExecuted

AS_TRADED = set(LeaseOpened.model_fields) & set(TradeExecuted.model_fields)
"""What ``lease.opened`` tells as its trade has it: the fields both have, by name."""


def _lease_of(trade: TradeExecuted, wallet_currency: Currency, held: int, every_s: int) -> Lease:
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
        ends_at(trade.executed_at, trade.hours),
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
        State(held_micros=held),
    )


async def _take_share(uow: BillingUnitOfWork, trade: TradeExecuted) -> tuple[Currency, int]:
    """Move the fill's share of its order's hold to the lease: (wallet currency, micros)."""
    hold = await uow.holds.get(trade.order_id)
    if hold is None:
        return trade.currency, 0  # no hold billing knows: the lease pays from available
    leased_gpus, share = holds.lease_share(hold, trade.gpus)
    await uow.holds.set_leased_gpus(hold.order_id, leased_gpus)
    return hold.currency, share


async def on_trade(uow: BillingUnitOfWork, event: Envelope[TradeExecuted]) -> None:
    """Open the lease of a trade, with its share of the order's hold as its prepayment."""
    trade = event.payload
    if await uow.leases.exists(trade.trade_id):
        return  # the same trade again: its share of the hold is taken already
    wallet_currency, held = await _take_share(uow, trade)
    lease = _lease_of(trade, wallet_currency, held, uow.rules.settle_every_s)
    await uow.leases.add(lease)
    opened = LeaseOpened(
        **trade.model_dump(include=AS_TRADED),
        lease_id=trade.trade_id,
        wallet_currency=wallet_currency,
        started_at=trade.executed_at,
        ends_at=lease.terms.ends_at,
    )
    message = lease_event(lease.terms, opened, "opened", event, uow.now)
    until = max(uow.now, trade.executed_at)
    # The opening event goes out with the first settlement's (hourly: the first hour).
    await settle(uow, [lease], until, event, opened=[message])


async def on_stop_requested(uow: BillingUnitOfWork, event: Envelope[LeaseStopRequested]) -> None:
    """Stop a lease at the time its buyer asked (its final charge exact to the second)."""
    request = event.payload
    lease = await uow.leases.get(request.lease_id)
    if lease is None or lease.terms.buyer_id != request.buyer_id or lease.state.ended:
        return  # unknown, someone else's, or over already
    stops = {lease.id: request.requested_at}
    # Settle up to the stop even if it lies ahead of this clock: its periods come first.
    await settle(uow, [lease], max(uow.now, request.requested_at), event, stops=stops)
