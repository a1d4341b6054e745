"""Pricing's real subscribers on the test session's Kafka, PostgreSQL and Redis: the
integration tests' helpers for what goes through the broker."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from gpux_platform.broker import make_broker
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.config import PricingSettings
from gpux_pricing.entrypoints.kafka import pricing_router


def pricing_settings(module_settings: GpuxSettings) -> PricingSettings:
    """Pricing's settings on the session's infrastructure and the module's own database."""
    return PricingSettings(
        **{**module_settings.model_dump(), "database_url": module_settings.database_url}
    )


@asynccontextmanager
async def subscribed(
    settings: PricingSettings, unit: Callable[[], PostgresPricingUnitOfWork]
) -> AsyncIterator[None]:
    """Pricing's subscribers (their own groups) running on ``unit`` until the block ends."""
    receiver = make_broker(settings, "pricing")
    receiver.include_router(pricing_router(settings, unit))
    await receiver.start()
    try:
        yield
    finally:
        await receiver.stop()
