"""The one place that wires the matching service: its store, subscribers, loops and relay."""

from __future__ import annotations

from pathlib import Path

from gpux_contracts.topics import CAPACITY_COMMANDS, ORDERS_BOOK, PRICING_OFFERS
from gpux_matching.adapters.postgres import SCHEMA
from gpux_matching.adapters.postgres.unit_of_work import (
    PostgresMatchingUnitOfWork,
    PostgresPartitionStore,
)
from gpux_matching.config import MatchingSettings
from gpux_matching.entrypoints.kafka import load_fx_end, load_reliability_end, matching_router
from gpux_matching.entrypoints.loops import run_expiry, run_reliability
from gpux_matching.service.partitions import Partitions
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """The book's partitions (each is rebuilt when Kafka assigns it, before its records are
    fetched), their subscribers and loops."""
    _, wiring = await wire_partitions(runtime)
    return wiring


async def wire_partitions(runtime: Runtime) -> tuple[Partitions, Wiring]:
    """``wire``, with the partitions it made (tests look at which ones it holds)."""
    settings = runtime.settings
    assert isinstance(settings, MatchingSettings)
    # Co-partitioned inputs: partition p of each topic holds the same GPUs.
    assert PRICING_OFFERS.partitions == ORDERS_BOOK.partitions == CAPACITY_COMMANDS.partitions
    pool = runtime.pool
    partitions = Partitions(
        PostgresPartitionStore(pool, runtime.tracer_provider.get_tracer("gpux.matching")),
        runtime.clock,
        snapshot_every=settings.snapshot_every,
        partitions=PRICING_OFFERS.partitions,
    )
    await load_fx_end(settings, partitions)
    await load_reliability_end(settings, partitions)
    relay = OutboxRelay(pool, runtime.broker, settings, SCHEMA)

    async def expiry() -> None:
        await run_expiry(partitions, settings.expiry_interval_s)

    async def reliability() -> None:
        await run_reliability(partitions)

    router = matching_router(settings, partitions, lambda: PostgresMatchingUnitOfWork(pool))
    return partitions, Wiring(routers=[router], tasks=[relay.run, expiry, reliability])


SPEC = ServiceSpec(
    name="matching", settings_type=MatchingSettings, wire=wire, migrations=MIGRATIONS
)
