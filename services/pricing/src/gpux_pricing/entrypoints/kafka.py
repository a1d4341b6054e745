"""Pricing's subscribers: one batched subscriber per topic it reads (``service.HANDLERS_BY_TOPIC``).

Each takes what the broker has, applies the batch in one unit of work (one transaction, the
inbox claim and the outbox rows in one statement each) and commits its offsets once after it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from faststream.kafka import KafkaRouter
from opentelemetry.trace import TracerProvider

from gpux_platform.batches import BatchHandler, subscribe_batches
from gpux_platform.settings import GpuxSettings
from gpux_pricing.service import HANDLERS_BY_TOPIC
from gpux_pricing.service.unit_of_work import PricingUnitOfWork

UnitOfWorkFactory = Callable[[], AbstractAsyncContextManager[PricingUnitOfWork]]


def group_of(topic_name: str) -> str:
    """Pricing's consumer group of one topic."""
    return f"pricing.{topic_name}"


def pricing_router(
    settings: GpuxSettings,
    unit_of_work: UnitOfWorkFactory,
    tracer_provider: TracerProvider | None = None,
) -> KafkaRouter:
    """Every subscriber of the pricing service (each event traced with ``tracer_provider``)."""
    router = KafkaRouter()
    for topic, handlers in HANDLERS_BY_TOPIC.items():
        subscribe_batches(
            router,
            settings,
            group=group_of(topic.name),
            batch=BatchHandler(topic, handlers, unit_of_work),
            tracer_provider=tracer_provider,
        )
    return router
