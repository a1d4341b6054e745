"""The one place that wires the gateway service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_common.service import Runtime, ServiceSpec, Wiring
from gpux_gateway.config import GatewaySettings

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, routes and loops of the gateway service; they land with its issue."""
    return Wiring()


SPEC = ServiceSpec(name="gateway", settings_type=GatewaySettings, wire=wire, migrations=MIGRATIONS)
