"""The one place that wires the matching service: consumers, the expiry loop, the relay."""

from __future__ import annotations

from pathlib import Path

from gpux_contracts.topics import ORDERS_BOOK, PRICING_OFFERS
from gpux_matching.book import Book
from gpux_matching.config import MatchingSettings
from gpux_matching.entrypoints.consumers import load_fx_end, matching_router
from gpux_matching.handlers import SCHEMA
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def wire(runtime: Runtime) -> Wiring:
    """The book (each partition is rebuilt when Kafka assigns it, before its records are
    fetched), its consumers and loops."""
    _, wiring = await wire_book(runtime)
    return wiring


async def wire_book(runtime: Runtime) -> tuple[Book, Wiring]:
    """``wire``, with the book it made (tests look at which partitions it holds)."""
    settings = runtime.settings
    assert isinstance(settings, MatchingSettings)
    # Co-partitioned inputs: partition p of both topics holds the same GPUs.
    assert PRICING_OFFERS.partitions == ORDERS_BOOK.partitions
    book = Book(runtime.pool, runtime.clock, settings.snapshot_every, PRICING_OFFERS.partitions)
    await load_fx_end(settings, book)
    relay = OutboxRelay(runtime.pool, runtime.broker, settings, SCHEMA)

    async def expiry() -> None:
        await book.run_expiry(settings.expiry_interval_s)

    return book, Wiring(routers=[matching_router(settings, book)], tasks=[relay.run, expiry])


SPEC = ServiceSpec(
    name="matching", settings_type=MatchingSettings, wire=wire, migrations=MIGRATIONS
)
