"""The one place that wires the pricing service: consumers, the FX loader, the outbox relay."""

from __future__ import annotations

from pathlib import Path

from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring
from gpux_pricing.adapters.postgres.unit_of_work import SCHEMA, PostgresPricingUnitOfWork
from gpux_pricing.adapters.redis.read_models import RedisReadModels
from gpux_pricing.config import PricingSettings
from gpux_pricing.entrypoints import loops
from gpux_pricing.entrypoints.kafka import pricing_router
from gpux_pricing.service.fx import read_rates
from gpux_pricing.service.market import BookCache

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, the FX loader, the read models' rebuild and the outbox relay."""
    settings = runtime.settings
    assert isinstance(settings, PricingSettings)
    cache = BookCache()
    read_models = RedisReadModels(runtime.redis, settings)

    def unit_of_work() -> PostgresPricingUnitOfWork:
        return PostgresPricingUnitOfWork(
            runtime.pool,
            cache=cache,
            read_models=read_models,
            clock=runtime.clock,
            band_for=settings.band_for,
        )

    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)
    # Read once here so that a bad file stops the start, not a later refresh.
    read_rates(settings.fx_file, runtime.clock.now())

    async def load_rates() -> None:
        await loops.load_fx_rates(runtime.broker, settings, settings.fx_file, runtime.clock)

    async def refresh_rates() -> None:
        await loops.refresh_fx_rates(
            runtime.broker, settings, settings.fx_file, runtime.clock, settings.fx_refresh_s
        )

    async def rebuild() -> None:
        await loops.rebuild_read_models(unit_of_work, read_models, runtime.clock)

    return Wiring(
        routers=[pricing_router(settings, unit_of_work, runtime.tracer_provider)],
        tasks=[relay.run, refresh_rates],
        on_started=[load_rates, rebuild],
    )


SPEC = ServiceSpec(name="pricing", settings_type=PricingSettings, wire=wire, migrations=MIGRATIONS)
