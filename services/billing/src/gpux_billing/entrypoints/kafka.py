"""Billing's Kafka subscribers: one batched subscriber per topic it reads, from the handlers.

Each takes what the broker has, applies the batch in one unit of work (one transaction: the
inbox claim in one statement, the handlers in order, the outbox in one insert) and commits
the offsets once, after the database (``gpux_platform.batches``, which also runs each
event's handler in a consumer span of the trace its envelope was created in).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from faststream.kafka import KafkaRouter
from opentelemetry.trace import TracerProvider

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.service import HANDLERS_BY_TOPIC, prepare
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_COMMANDS,
    ORDERS_STATUS,
    PRICING_BEST_ASKS,
    Topic,
)
from gpux_platform.batches import BatchHandler, subscribe_batches
from gpux_platform.settings import GpuxSettings

GROUPS: Mapping[Topic, str] = {
    BILLING_COMMANDS: "billing.commands",
    ORDERS_COMMANDS: "billing.orders",
    ORDERS_STATUS: "billing.orders.status",
    MARKET_TRADES: "billing.trades",
    PRICING_BEST_ASKS: "billing.best-asks",
    FX_RATES: "billing.fx",
}
"""The consumer group of each topic billing reads."""


def billing_router(
    settings: GpuxSettings,
    unit_of_work: Callable[[], PostgresBillingUnitOfWork],
    tracer_provider: TracerProvider | None = None,
) -> KafkaRouter:
    """Every subscriber of the billing service, each applying batches through ``unit_of_work``."""
    router = KafkaRouter()
    for topic, handlers in HANDLERS_BY_TOPIC.items():
        # The batch's leases and wallets are locked first, in key order (service.locking), and
        # its orders' funding read once (service.orders); the unit's commit writes it.
        batch = BatchHandler(topic, handlers, unit_of_work, prepare=prepare)
        subscribe_batches(
            router, settings, group=GROUPS[topic], batch=batch, tracer_provider=tracer_provider
        )
    return router
