"""The batch path on real Kafka and PostgreSQL: a burst is one transaction and one offset commit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from faststream.kafka import KafkaBroker, KafkaRouter

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.batches import BatchHandler, subscribe_batches
from gpux_platform.broker import Outgoing, ensure_topics, make_broker, publish_many
from gpux_platform.settings import GpuxSettings
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "batchtest"
BURST = 300


class Unit(PostgresUnitOfWork):
    commits = 0

    async def commit(self) -> None:
        await super().commit()
        Unit.commits += 1


async def on_ping(uow: Unit, event: Envelope[PingSent]) -> None:
    if event.payload.note == "poison":
        raise ValueError("never applies")
    await uow.conn.execute(f"INSERT INTO {SCHEMA}.pings VALUES ($1)", event.payload.ping_id)


@pytest.fixture
async def pool(gpux_settings: GpuxSettings, tmp_path: Path) -> AsyncIterator[asyncpg.Pool]:
    (tmp_path / "0001_pings.sql").write_text("CREATE TABLE pings (id text PRIMARY KEY);")
    async with migrated_pool(gpux_settings, SCHEMA, tmp_path) as pool:
        await pool.execute(f"TRUNCATE {SCHEMA}.pings, {SCHEMA}.inbox, {SCHEMA}.set_aside")
        yield pool


async def run_burst(
    settings: GpuxSettings, pool: asyncpg.Pool, events: list[Envelope[PingSent]], name: str
) -> None:
    topic = Topic(name, "ping id", 1, Cleanup.DELETE, "a test's own", payloads=(PingSent,))
    await ensure_topics(settings, [topic])
    sender = make_broker(settings, "batch-sender")
    await sender.start()
    # All records are on the broker before the consumer starts: its first fetch has them all.
    await publish_many(sender, settings, [Outgoing(topic, "k", e) for e in events])
    await sender.stop()
    receiver: KafkaBroker = make_broker(settings, "batch-receiver")
    batch = BatchHandler(topic, {PingSent: on_ping}, lambda: Unit(pool, SCHEMA))
    router = KafkaRouter()
    subscribe_batches(router, settings, group=name, batch=batch, max_records=1000)
    receiver.include_router(router)
    await receiver.start()
    try:
        done = len([e for e in events if e.payload.note != "poison"])

        async def applied() -> bool:
            count: int = await pool.fetchval(f"SELECT count(*) FROM {SCHEMA}.pings")
            return count == done

        await eventually(applied, what=f"{done} pings applied")
        await asyncio.sleep(0.5)  # the offset commit follows the transaction's
    finally:
        await receiver.stop()


def pings(count: int, poison: int | None = None) -> list[Envelope[PingSent]]:
    now = datetime.now(UTC)
    return [
        wrap(
            PingSent(ping_id=f"p{n}", note="poison" if n == poison else ""),
            producer="test",
            occurred_at=now,
        )
        for n in range(count)
    ]


async def test_a_burst_is_one_transaction_and_one_offset_commit(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    Unit.commits = 0
    await run_burst(gpux_settings, pool, pings(BURST), "batchtest.burst")
    assert await pool.fetchval(f"SELECT count(*) FROM {SCHEMA}.inbox") == BURST
    assert Unit.commits == 1
    assert len(offset_commits) == 1


async def test_a_poisoned_burst_is_split_and_the_bad_record_set_aside(
    gpux_settings: GpuxSettings, pool: asyncpg.Pool, offset_commits: list[str]
) -> None:
    Unit.commits = 0
    events = pings(64, poison=41)
    await run_burst(gpux_settings, pool, events, "batchtest.poison")
    rows = await pool.fetch(f"SELECT event_id, error FROM {SCHEMA}.set_aside")
    assert [r["event_id"] for r in rows] == [events[41].event_id]
    assert "never applies" in rows[0]["error"]
    assert await pool.fetchval(f"SELECT count(*) FROM {SCHEMA}.inbox") == 64
    assert len(offset_commits) == 1  # split or not, the batch's offsets are committed once
    assert Unit.commits > 1
