"""The one place that wires the billing service's adapters to its handlers."""

from __future__ import annotations

from pathlib import Path

from gpux_billing import read_model
from gpux_billing.config import BillingSettings
from gpux_billing.entrypoints.consumers import billing_router, settlement_rules
from gpux_billing.entrypoints.settler import Settler
from gpux_billing.handlers import SCHEMA
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers (commands, orders, order statuses) and the outbox relay of billing."""
    settings = runtime.settings
    assert isinstance(settings, BillingSettings)
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)

    async def rebuild_read_model() -> None:
        # Redis follows PostgreSQL: a restart (or a flushed Redis) serves the same balances.
        await read_model.rebuild(runtime.pool, runtime.redis, settings, runtime.clock)

    settler = Settler(runtime, settings, settlement_rules(settings))
    return Wiring(
        routers=[billing_router(settings, runtime.pool, runtime.redis, runtime.clock)],
        tasks=[relay.run, settler.run],
        on_started=[rebuild_read_model],
    )


SPEC = ServiceSpec(name="billing", settings_type=BillingSettings, wire=wire, migrations=MIGRATIONS)
