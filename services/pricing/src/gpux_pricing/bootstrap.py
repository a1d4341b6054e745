"""The one place that wires the pricing service: consumers, the FX loader and its age watch,
the read models' rebuild and its watch, the outbox relay."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import partial
from pathlib import Path

from gpux_platform.broker import Outgoing, publish_many
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Store, Wiring
from gpux_pricing.adapters import ecb
from gpux_pricing.adapters.postgres.unit_of_work import SCHEMA, PostgresPricingUnitOfWork
from gpux_pricing.adapters.redis.read_models import RedisReadModels
from gpux_pricing.config import PricingSettings
from gpux_pricing.entrypoints import loops
from gpux_pricing.entrypoints.kafka import UnitOfWorkFactory, pricing_router
from gpux_pricing.service.fx import FileRates, RateSource, read_rates
from gpux_pricing.service.market import BookCache

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, the FX loader and its age watch, the read models' rebuild (at start, and by
    their watch whenever Redis may have lost them) and the outbox relay."""
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
    rates = fx_wiring(runtime, settings, unit_of_work)

    async def rebuild(reason: str = "start") -> None:
        await loops.rebuild_watched(unit_of_work, read_models, runtime.clock, reason)

    async def watch_read_models() -> None:
        await loops.watch_read_models(
            partial(rebuild, "lost"), read_models, settings.read_models_check_s
        )

    return Wiring(
        routers=[pricing_router(settings, unit_of_work, runtime.tracer_provider)],
        tasks=[relay.run, *rates.tasks, watch_read_models],
        on_started=[*rates.on_started, rebuild],
    )


def fx_wiring(
    runtime: Runtime, settings: PricingSettings, unit_of_work: UnitOfWorkFactory
) -> Wiring:
    """The FX loader of the chosen source (``GPUX_FX_SOURCE``) and the watch on the held
    rates' ages."""

    def loader(source: RateSource) -> loops.FxLoader:
        async def publish(messages: Sequence[Outgoing]) -> None:
            await publish_many(runtime.broker, settings, messages)

        return loops.FxLoader(source, unit_of_work, publish, runtime.clock)

    async def watch_ages() -> None:
        warn_after = timedelta(seconds=settings.fx_warn_after_s)
        await loops.watch_fx_ages(
            unit_of_work, runtime.clock, warn_after, settings.fx_check_every_s
        )

    if settings.fx_source == "ecb":

        async def from_ecb() -> None:
            async with ecb.client(settings.fx_fetch_timeout_s) as http:
                url, attempts = str(settings.fx_ecb_url), settings.fx_fetch_attempts
                # At start (a failure is tried again in fx_retry_s), then every fx_refresh_s.
                await loader(ecb.EcbRates(http, url, attempts=attempts)).run(
                    settings.fx_refresh_s, settings.fx_retry_s
                )

        return Wiring(tasks=[from_ecb, watch_ages])

    # Read once here so that a bad file stops the start, not a later refresh.
    read_rates(settings.fx_file, runtime.clock.now())
    file = loader(FileRates(settings.fx_file))

    async def load_file() -> None:
        await file.load()

    async def refresh_file() -> None:
        every_s = settings.fx_refresh_s
        await file.run(every_s, settings.fx_retry_s, first_s=every_s)

    return Wiring(tasks=[refresh_file, watch_ages], on_started=[load_file])


# Pricing's work is Redis's read models (quotes, depth, the price stream): it needs Redis to be
# ready, where the other services only degrade without it.
SPEC = ServiceSpec(
    name="pricing",
    settings_type=PricingSettings,
    wire=wire,
    migrations=MIGRATIONS,
    needs=frozenset(Store),
)
