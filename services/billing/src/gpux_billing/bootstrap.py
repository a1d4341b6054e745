"""The one place that wires the billing service's adapters to its handlers."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gpux_billing.adapters.postgres.unit_of_work import SCHEMA, PostgresBillingUnitOfWork
from gpux_billing.adapters.redis import balances
from gpux_billing.config import BillingSettings
from gpux_billing.entrypoints.kafka import billing_router
from gpux_billing.entrypoints.loops import Settler, watch_balances
from gpux_platform.metrics import SETTLEMENT
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """Consumers, the settlement loop and the outbox relay of billing."""
    settings = runtime.settings
    assert isinstance(settings, BillingSettings)
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)
    watch = balances.Watch()
    unit_of_work = partial(
        PostgresBillingUnitOfWork,
        runtime.pool,
        rules=settings.rules(),
        clock=runtime.clock,
        redis=runtime.redis,
        settings=settings,
        watch=watch,
    )

    async def rebuild_read_model() -> None:
        # Redis follows PostgreSQL: a restart (or a flushed Redis) serves the same balances.
        await balances.rebuild(runtime.pool, runtime.redis, settings, runtime.clock, watch)

    async def lost() -> bool:
        return await watch.lost(runtime.redis, settings)

    async def watch_read_model() -> None:
        await watch_balances(lost, rebuild_read_model, settings.read_models_check_s)

    settler = Settler(unit_of_work, batch=settings.settle_batch, tick_s=settings.settle_tick_s)
    return Wiring(
        routers=[billing_router(settings, unit_of_work, runtime.tracer_provider)],
        tasks=[relay.run, settler.run, watch_read_model],
        on_started=[rebuild_read_model],
    )


SPEC = ServiceSpec(
    name="billing",
    settings_type=BillingSettings,
    wire=wire,
    migrations=MIGRATIONS,
    metrics=SETTLEMENT,
)
