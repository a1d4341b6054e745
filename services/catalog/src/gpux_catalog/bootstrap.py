"""The one place that wires the catalog service's adapters to its handlers."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.adapters.postgres.unit_of_work import SCHEMA, PostgresCatalogUnitOfWork
from gpux_catalog.config import CatalogSettings
from gpux_catalog.entrypoints.http import ROUTERS
from gpux_catalog.entrypoints.loops import check, resync_loop
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Publish the packaged catalog once started, then check for a newer version periodically;
    the outbox relay publishes what a check queued."""
    settings = runtime.settings
    assert isinstance(settings, CatalogSettings)
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)
    unit_of_work = partial(PostgresCatalogUnitOfWork, runtime.pool, settings.namespace)

    async def publish_check() -> None:
        await check(
            unit_of_work,
            gpus=load_gpu_catalog(),
            models=load_model_catalog(),
            now=runtime.clock.now(),
        )

    return Wiring(
        http=ROUTERS,
        on_started=[publish_check],
        tasks=[relay.run, lambda: resync_loop(publish_check, settings.publish_check_s)],
    )


SPEC = ServiceSpec(name="catalog", settings_type=CatalogSettings, wire=wire, migrations=MIGRATIONS)
