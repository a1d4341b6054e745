"""Billing's handlers, one module per concept, by the topic they read and the payload class.

``HANDLERS_BY_TOPIC[topic][PayloadClass]`` is the handler of that event: the Kafka
entrypoint builds one batched subscriber per topic from it, and a type without a handler is
counted and logged there, never dropped silently. Every handler takes the unit of work
(``unit_of_work.BillingUnitOfWork``) and the event, and changes state only through it.
``prepare`` is what a unit does first with the events it claimed, before their handlers;
``flush`` what it writes of their staged decisions when it commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpux_billing.service import (
    interruptions,
    leases,
    market,
    orders,
    payouts,
    provisioning,
    reliability,
    wallets,
)
from gpux_billing.service.ledger import announce
from gpux_billing.service.locking import lock_first
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.billing import CreditRequested, TopupConfirmRequested, TopupRequested
from gpux_contracts.capacity import LeaseInterruptionRequested
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.fx import RatePublished
from gpux_contracts.leases import (
    LeaseFailureReported,
    LeaseReadyReported,
    LeaseStopRequested,
)
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderPlaced,
    OrderStatusChanged,
    TradeExecuted,
)
from gpux_contracts.payouts import (
    PayoutConfirmRequested,
    PayoutRejectRequested,
    PayoutRequested,
)
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_COMMANDS,
    ORDERS_STATUS,
    PRICING_BEST_ASKS,
    Topic,
)
from gpux_platform.batches import Handler

Handlers = Mapping[type[Payload], Handler[BillingUnitOfWork]]

HANDLERS_BY_TOPIC: Mapping[Topic, Handlers] = {
    BILLING_COMMANDS: {
        CreditRequested: wallets.on_credit_requested,
        TopupRequested: wallets.on_topup_requested,
        TopupConfirmRequested: wallets.on_topup_confirm_requested,
        LeaseStopRequested: leases.on_stop_requested,
        LeaseInterruptionRequested: interruptions.on_interruption_requested,
        LeaseReadyReported: provisioning.on_ready_reported,
        LeaseFailureReported: provisioning.on_failure_reported,
        PayoutRequested: payouts.on_payout_requested,
        PayoutConfirmRequested: payouts.on_payout_confirm_requested,
        PayoutRejectRequested: payouts.on_payout_reject_requested,
    },
    ORDERS_COMMANDS: {
        OrderPlaced: orders.on_placed,
        OrderCancelRequested: orders.on_cancel_requested,
    },
    ORDERS_STATUS: {
        OrderStatusChanged: orders.on_status_changed,
    },
    MARKET_TRADES: {
        TradeExecuted: leases.on_trade,
    },
    PRICING_BEST_ASKS: {
        BestAskChanged: market.on_best_ask,
    },
    FX_RATES: {
        RatePublished: market.on_rate,
    },
}
"""Every event billing consumes: topic -> payload class -> handler."""


async def prepare(uow: BillingUnitOfWork, events: Sequence[Envelope[Any]]) -> None:
    """Before a batch's handlers: its locks in key order (``locking.lock_first``), then what
    its orders are funded from and its trades' leases and holds, read once (``orders.prepare``,
    ``leases.prepare``)."""
    await lock_first(uow, events)
    await orders.prepare(uow, events)
    await leases.prepare(uow, events)


async def flush(uow: BillingUnitOfWork) -> None:
    """Write what the unit's handlers staged, set-based: the order funding (``orders.write``),
    then the leases its trades opened (``leases.write``: a fill's hold is placed first), then
    one balance read and one ``balance.changed`` per wallet changed, in the trace of the last
    event that changed it; last the lease outcomes the unit decided (its handlers' and its new
    leases'), counted at once (``reliability.write``: one ``reliability.changed`` per offer
    changed). The unit's ``commit`` calls it, before the outbox."""
    staged = uow.staged.take()
    await orders.write(uow, staged)
    staged.wallets.update(await leases.write(uow, staged))
    if staged.wallets:
        await announce(uow, staged.wallets)
    # The trades' new leases stage their outcomes as they are written: those are taken too.
    await reliability.write(uow, [*staged.outcomes, *uow.staged.take().outcomes])
