"""The one place that wires the catalog service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_catalog.config import CatalogSettings
from gpux_common.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, routes and loops of the catalog service; they land with its issue."""
    return Wiring()


SPEC = ServiceSpec(name="catalog", settings_type=CatalogSettings, wire=wire, migrations=MIGRATIONS)
