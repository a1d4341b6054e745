"""Pricing's handlers, one module per concept, registered by the payload class they take.

``HANDLERS_BY_TOPIC`` is what ``entrypoints.kafka`` subscribes: one batched subscriber per
topic, each record handled by the function its payload class names here.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.accounts import AccountChanged
from gpux_contracts.catalog import GpuPublished
from gpux_contracts.events import Payload
from gpux_contracts.fx import RatePublished
from gpux_contracts.offers import (
    OfferChangeRequested,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
)
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.topics import (
    ACCOUNTS,
    BILLING_RELIABILITY,
    CATALOG_GPUS,
    FX_RATES,
    MARKET_TRADES,
    OFFERS_COMMANDS,
    OFFERS_STATUS,
    Topic,
)
from gpux_platform.batches import Handler
from gpux_pricing.service import fx, gpus, history, market, offers, reliability, sellers
from gpux_pricing.service.unit_of_work import PricingUnitOfWork

HANDLERS_BY_TOPIC: Mapping[Topic, Mapping[type[Payload], Handler[PricingUnitOfWork]]] = {
    ACCOUNTS: {AccountChanged: sellers.on_account_changed},
    CATALOG_GPUS: {GpuPublished: gpus.on_gpu_published},
    FX_RATES: {RatePublished: fx.on_rate_published},
    OFFERS_COMMANDS: {
        OfferSubmitted: offers.on_submitted,
        OfferChangeRequested: offers.on_change_requested,
        OfferWithdrawalRequested: offers.on_withdrawal_requested,
    },
    OFFERS_STATUS: {OfferStatusChanged: market.on_book_status},
    MARKET_TRADES: {TradeExecuted: history.on_trade_executed},
    BILLING_RELIABILITY: {ReliabilityChanged: reliability.on_reliability_changed},
}
"""Each topic pricing reads, with the handler of each payload class it carries."""
