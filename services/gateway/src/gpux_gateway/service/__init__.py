"""The handlers of the events that keep the gateway's PostgreSQL views, by topic and payload.

Each handler takes the unit of work of its batch and the event; ``entrypoints.kafka`` builds
one batched subscriber per topic from this map. Beside the handlers, what the resources'
services share: refusals as problems (``access``), command envelopes (``commands``),
idempotent creation (``idempotency``) and placing an order (``placing``, which the re-buy of
an interrupted lease, ``rebuy``, takes too).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.billing import BalanceChanged
from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.events import Payload
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LedgerPosted,
)
from gpux_contracts.offers import OfferAccepted, OfferStatusChanged, OfferWithdrawn
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderStatusChanged,
    TradeExecuted,
)
from gpux_contracts.payouts import PayoutStatusChanged
from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.settlement import LeasesSettled, LedgerBatchPosted
from gpux_contracts.topics import (
    BILLING_BALANCES,
    BILLING_LEASES,
    BILLING_LEDGER,
    BILLING_PAYOUTS,
    BILLING_RELIABILITY,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_BOOK,
    ORDERS_STATUS,
    PRICING_OFFERS,
    Topic,
)
from gpux_gateway.service import (
    balances,
    delivery,
    leases,
    ledger,
    offers,
    orders,
    payouts,
    reliability,
)
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.batches import Handler

HANDLERS_BY_TOPIC: Mapping[Topic, Mapping[type[Payload], Handler[GatewayUnitOfWork]]] = {
    OFFERS_STATUS: {OfferStatusChanged: offers.on_status_changed},
    PRICING_OFFERS: {OfferAccepted: offers.on_accepted, OfferWithdrawn: offers.on_withdrawn},
    ORDERS_BOOK: {OrderFunded: orders.on_funded, OrderCancelRequested: orders.on_cancel_forwarded},
    ORDERS_STATUS: {OrderStatusChanged: orders.on_status_changed},
    MARKET_TRADES: {TradeExecuted: orders.on_trade_executed},
    BILLING_LEASES: {
        LeaseOpened: delivery.on_opened,
        LeaseReady: delivery.on_ready,
        LeaseCharged: leases.on_charged,
        LeasesSettled: leases.on_settled,
        LeaseLowBalance: leases.on_low_balance,
        LeaseInterruptionNoticed: leases.on_interruption_noticed,
        LeaseEnded: delivery.on_ended,
    },
    BILLING_LEDGER: {LedgerPosted: ledger.on_posted, LedgerBatchPosted: ledger.on_batch_posted},
    BILLING_BALANCES: {BalanceChanged: balances.on_changed},
    BILLING_PAYOUTS: {PayoutStatusChanged: payouts.on_status_changed},
    BILLING_RELIABILITY: {ReliabilityChanged: reliability.on_changed},
}
