"""The one place that wires the pricing service: consumers, the FX loader, the outbox relay."""

from __future__ import annotations

from pathlib import Path

from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring
from gpux_pricing import history, market_data
from gpux_pricing.adapters import repository
from gpux_pricing.config import PricingSettings
from gpux_pricing.entrypoints.consumers import pricing_router
from gpux_pricing.fx_loader import publish_rates, read_rates
from gpux_pricing.handlers import SCHEMA

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, the FX loader and the outbox relay of the pricing service."""
    settings = runtime.settings
    assert isinstance(settings, PricingSettings)
    band = settings.band_for
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)
    rates = read_rates(settings.fx_file)

    async def load_rates() -> None:
        await publish_rates(runtime.broker, settings, rates, runtime.clock.now())

    async def refresh_read_model() -> None:
        # A restart republishes nothing to Kafka (the compacted topic already holds the
        # quotes) but rebuilds the Redis read model from PostgreSQL, the source of truth.
        now = runtime.clock.now()
        for gpu, tier in await repository.books(runtime.pool):
            quotes = await market_data.book_quotes(runtime.pool, gpu, tier, now)
            await market_data.to_redis(runtime.redis, settings, quotes, stream=False)
        rates = await repository.rate_table(runtime.pool)
        traded = await runtime.pool.fetch("SELECT DISTINCT gpu, tier FROM pricing.trades")
        for row in traded:
            candles = await history.snapshot(runtime.pool, row["gpu"], row["tier"], rates, now)
            await history.to_redis(runtime.redis, settings, candles)

    return Wiring(
        routers=[pricing_router(settings, runtime.pool, runtime.redis, runtime.clock, band)],
        tasks=[relay.run],
        on_started=[load_rates, refresh_read_model],
    )


SPEC = ServiceSpec(name="pricing", settings_type=PricingSettings, wire=wire, migrations=MIGRATIONS)
