"""The one place that wires the billing service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_billing.config import BillingSettings
from gpux_common.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, routes and loops of the billing service; they land with its issue."""
    return Wiring()


SPEC = ServiceSpec(name="billing", settings_type=BillingSettings, wire=wire, migrations=MIGRATIONS)
