"""The one place that wires the matching service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_common.service import Runtime, ServiceSpec, Wiring
from gpux_matching.config import MatchingSettings

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, routes and loops of the matching service; they land with its issue."""
    return Wiring()


SPEC = ServiceSpec(
    name="matching", settings_type=MatchingSettings, wire=wire, migrations=MIGRATIONS
)
