"""Billing's Kafka subscribers: one batched subscriber per topic it reads, from the handlers.

Each takes what the broker has, applies the batch in one unit of work (one transaction: the
inbox claim in one statement, the handlers in order, the outbox in one insert) and commits
the offsets once, after the database (``gpux_platform.batches``). Each event's handler runs
in a consumer span of its own, continuing the trace its envelope was created in, so one
order stays one trace across billing although its records are consumed in batches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from faststream.kafka import KafkaRouter
from opentelemetry import propagate
from opentelemetry.trace import SpanKind, Tracer, TracerProvider

from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.service import HANDLERS_BY_TOPIC, Handlers
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_COMMANDS,
    ORDERS_STATUS,
    PRICING_BEST_ASKS,
    Topic,
)
from gpux_platform.batches import BatchHandler, Handler, subscribe_batches
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


def _traced(
    handler: Handler[BillingUnitOfWork], tracer: Tracer, span_name: str
) -> Handler[BillingUnitOfWork]:
    async def run(uow: BillingUnitOfWork, event: Envelope[Any]) -> None:
        parent = None if event.trace is None else propagate.extract(event.trace.carrier())
        with tracer.start_as_current_span(span_name, context=parent, kind=SpanKind.CONSUMER):
            await handler(uow, event)

    return run


def _handlers(settings: GpuxSettings, topic: Topic, tracer: Tracer | None) -> Handlers:
    handlers = HANDLERS_BY_TOPIC[topic]
    if tracer is None:
        return handlers
    span_name = f"{settings.topic(topic)} process"
    return {kind: _traced(handler, tracer, span_name) for kind, handler in handlers.items()}


def billing_router(
    settings: GpuxSettings,
    unit_of_work: Callable[[], PostgresBillingUnitOfWork],
    tracer_provider: TracerProvider | None = None,
) -> KafkaRouter:
    """Every subscriber of the billing service, each applying batches through ``unit_of_work``."""
    router = KafkaRouter()
    tracer = None if tracer_provider is None else tracer_provider.get_tracer("gpux.billing")
    for topic in HANDLERS_BY_TOPIC:
        batch = BatchHandler(topic, _handlers(settings, topic, tracer), unit_of_work)
        subscribe_batches(router, settings, group=GROUPS[topic], batch=batch)
    return router
