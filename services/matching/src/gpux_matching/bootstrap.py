"""The one place that wires the matching service: consumers, the expiry loop, the relay."""

from __future__ import annotations

from pathlib import Path

from gpux_common.outbox import OutboxRelay
from gpux_common.service import Runtime, ServiceSpec, Wiring
from gpux_matching.config import MatchingSettings
from gpux_matching.entrypoints.consumers import matching_router
from gpux_matching.handlers import SCHEMA, Book

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Restore the book (before any consumer starts), then its consumers and loops."""
    settings = runtime.settings
    assert isinstance(settings, MatchingSettings)
    book = Book(runtime.pool, runtime.clock, settings.snapshot_every)
    await book.recover()
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)

    async def expiry() -> None:
        await book.run_expiry(settings.expiry_interval_s)

    return Wiring(routers=[matching_router(settings, book)], tasks=[relay.run, expiry])


SPEC = ServiceSpec(
    name="matching", settings_type=MatchingSettings, wire=wire, migrations=MIGRATIONS
)
