"""The one place that wires the pricing service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_common.service import Runtime, ServiceSpec, Wiring
from gpux_pricing.config import PricingSettings

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, routes and loops of the pricing service; they land with its issue."""
    return Wiring()


SPEC = ServiceSpec(name="pricing", settings_type=PricingSettings, wire=wire, migrations=MIGRATIONS)
