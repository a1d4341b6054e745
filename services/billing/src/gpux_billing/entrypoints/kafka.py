"""Billing's subscribers: thin adapters from Kafka records to handlers, once per event."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

import asyncpg
from faststream.kafka import KafkaRouter
from redis.asyncio import Redis

from gpux_billing import handlers, read_model, settlement
from gpux_billing.config import BillingSettings
from gpux_billing.domain.holds import HoldPolicy
from gpux_billing.domain.leases import Policy
from gpux_billing.handlers import Wallet
from gpux_contracts.billing import (
    CreditRequested,
    TopupConfirmRequested,
    TopupRequested,
)
from gpux_contracts.events import Envelope, EventCodec
from gpux_contracts.fx import RatePublished
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderPlaced,
    OrderStatusChanged,
    TradeExecuted,
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
from gpux_platform.clock import Clock
from gpux_platform.consumers import subscribe_once

Handler = Callable[[asyncpg.Connection, Envelope[Any]], Awaitable[list[Wallet]]]


def billing_router(
    settings: BillingSettings, pool: asyncpg.Pool, redis: Redis, clock: Clock
) -> KafkaRouter:
    """Every subscriber of the billing service."""
    router = KafkaRouter()
    rules = settlement_rules(settings)
    holding = HoldPolicy(settings.market_slippage_bps, timedelta(seconds=settings.fx_max_age_s))

    async def refresh(touched: list[Wallet]) -> None:
        await read_model.to_redis(pool, redis, settings, clock, touched)

    def subscribe(
        topic: Topic, group: str, codec: EventCodec[Any], route: Mapping[str, Handler]
    ) -> None:
        async def dispatch(conn: asyncpg.Connection, envelope: Envelope[Any]) -> list[Wallet]:
            handler = route.get(envelope.event_type)
            return [] if handler is None else await handler(conn, envelope)

        subscribe_once(
            router,
            settings,
            topic=topic,
            group=group,
            codec=codec,
            pool=pool,
            schema=handlers.SCHEMA,
            handle=dispatch,
            after=refresh,
        )

    subscribe(
        BILLING_COMMANDS,
        "billing.commands",
        EventCodec(CreditRequested, TopupRequested, TopupConfirmRequested, LeaseStopRequested),
        {
            "lease.stop_requested": lambda c, e: settlement.on_stop(c, e, rules, clock.now()),
            "credit.requested": handlers.on_credit_requested,
            "topup.requested": lambda c, e: handlers.on_topup_requested(c, e, settings.dev_topups),
            "topup.confirm_requested": handlers.on_topup_confirm_requested,
        },
    )
    subscribe(
        ORDERS_COMMANDS,
        "billing.orders",
        EventCodec(OrderPlaced, OrderCancelRequested),
        {
            "order.placed": lambda c, e: handlers.on_order_placed(c, e, clock.now(), holding),
            "order.cancel_requested": lambda c, e: handlers.on_order_cancel_requested(
                c, e, clock.now()
            ),
        },
    )
    subscribe(
        ORDERS_STATUS,
        "billing.orders.status",
        EventCodec(OrderStatusChanged),
        {"order.status_changed": lambda c, e: handlers.on_order_status(c, e, clock.now())},
    )
    subscribe(
        MARKET_TRADES,
        "billing.trades",
        EventCodec(TradeExecuted),
        {"trade.executed": lambda c, e: settlement.on_trade(c, e, rules, clock.now())},
    )
    subscribe(
        PRICING_BEST_ASKS,
        "billing.best-asks",
        EventCodec(BestAskChanged),
        {"best_ask.changed": handlers.on_best_ask},
    )
    subscribe(
        FX_RATES,
        "billing.fx",
        EventCodec(RatePublished),
        {"fx.rate_published": settlement.on_rate},
    )
    return router


def settlement_rules(settings: BillingSettings) -> settlement.Rules:
    """The lease policy the settings configure."""
    policy = Policy(fee_bps=settings.fee_bps, runway_s=settings.runway_s)
    return settlement.Rules(policy, settings.settle_every_s)
