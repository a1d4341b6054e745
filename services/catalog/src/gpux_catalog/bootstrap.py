"""The one place that wires the catalog service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_catalog.config import CatalogSettings
from gpux_catalog.specs import load_gpu_catalog, load_model_catalog
from gpux_catalog.sync import resync_loop, sync_catalog
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Publish the packaged catalog once started, then check for a newer version periodically."""
    settings = runtime.settings
    assert isinstance(settings, CatalogSettings)

    async def sync() -> None:
        await sync_catalog(
            runtime.pool,
            runtime.broker,
            settings,
            runtime.clock.now(),
            load_gpu_catalog(),
            load_model_catalog(),
        )

    return Wiring(
        on_started=[sync],
        tasks=[lambda: resync_loop(sync, settings.publish_check_s)],
    )


SPEC = ServiceSpec(name="catalog", settings_type=CatalogSettings, wire=wire, migrations=MIGRATIONS)
