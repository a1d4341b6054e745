"""Long-lived connections survive their store's restart: the outbox relay's LISTEN, a pool,
a Redis reader, and readiness, which reports the outage and then recovers.

Each test restarts a private store of its own (``private_postgres``, ``private_redis``),
never the shared ones other sessions use; Kafka is the session's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from redis.asyncio import Redis

from gpux_contracts.events import wrap
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.stores import PrivateStore
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import Outgoing, ensure_topics, kafka_producer, make_broker
from gpux_platform.cache import create_redis
from gpux_platform.db import create_pool
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import NEEDS, Runtime, Store, health_router, readiness, ready_status
from gpux_platform.settings import GpuxSettings
from gpux_platform.telemetry import make_tracer_provider
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "restarttest"
WHERE = Topic(
    "restarttest.pings", "ping id", 1, Cleanup.DELETE, "a test's own", payloads=(PingSent,)
)
NO_POLL_S = 600.0
"""The relay's fallback poll in these tests: longer than any wait, so whatever it publishes
in time was woken by a NOTIFY."""


def on(settings: GpuxSettings, **stores: str) -> GpuxSettings:
    """The session's settings with some stores replaced by private ones."""
    if "database_url" in stores:
        return settings.model_copy(update={"database_url": SecretStr(stores["database_url"])})
    return settings.model_copy(update=stores)


@pytest.fixture
async def private_pool(
    gpux_settings: GpuxSettings, private_postgres: PrivateStore, tmp_path: Path
) -> AsyncIterator[asyncpg.Pool]:
    settings = on(gpux_settings, database_url=private_postgres.url)
    async with migrated_pool(settings, SCHEMA, tmp_path, max_size=4) as pool:
        yield pool


async def commit_ping(pool: asyncpg.Pool, ping_id: str) -> None:
    envelope = wrap(PingSent(ping_id=ping_id), producer="test", occurred_at=datetime.now(UTC))
    async with PostgresUnitOfWork(pool, SCHEMA) as uow:
        uow.outbox.add(Outgoing(WHERE, ping_id, envelope))
        await uow.commit()


async def unpublished(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval(
        f"SELECT count(*) FROM {SCHEMA}.outbox WHERE published_at IS NULL"
    )
    return count


@contextlib.asynccontextmanager
async def relaying(settings: GpuxSettings, pool: asyncpg.Pool) -> AsyncIterator[OutboxRelay]:
    await ensure_topics(settings, [WHERE])
    broker = make_broker(settings, "restart-test")
    await broker.start()
    relay = OutboxRelay(pool, broker, settings, SCHEMA, idle_wait_s=NO_POLL_S)
    running = asyncio.ensure_future(relay.run())
    try:
        yield relay
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await broker.stop()


async def test_the_relay_listens_again_after_postgresql_restarts_and_is_woken_by_notify(
    gpux_settings: GpuxSettings, private_postgres: PrivateStore, private_pool: asyncpg.Pool
) -> None:
    async with relaying(gpux_settings, private_pool) as relay:
        await eventually(lambda: relay.stats.listens == 1, what="the relay to listen")
        await commit_ping(private_pool, "before")
        await eventually(lambda: unpublished(private_pool), lambda n: n == 0, what="a relay")
        assert relay.stats.notified >= 1

        await private_postgres.restart()
        await eventually(lambda: relay.stats.listens == 2, what="the relay to listen again")
        notified, polls = relay.stats.notified, relay.stats.polls
        await commit_ping(private_pool, "after")
        await eventually(
            lambda: unpublished(private_pool), lambda n: n == 0, what="the row after the restart"
        )
    assert relay.stats.notified > notified  # woken by the commit's NOTIFY again
    assert relay.stats.polls == polls == 0  # never by the fallback poll
    assert relay.stats.lost >= 1


async def test_a_pool_answers_on_new_connections_after_postgresql_restarts(
    private_postgres: PrivateStore, private_pool: asyncpg.Pool
) -> None:
    async def backends() -> set[int]:
        async def one() -> int:
            async with private_pool.acquire() as conn:
                pid: int = await conn.fetchval("SELECT pg_backend_pid()")
                await asyncio.sleep(0.05)  # hold it, so the four calls use four connections
                return pid

        return set(await asyncio.gather(*(one() for _ in range(4))))

    before = await backends()
    await private_postgres.restart()
    after = await backends()  # the first call after the restart succeeds: no retry here
    assert len(after) == 4
    assert not before & after  # every connection is a new one


async def test_a_blocked_redis_read_comes_back_after_redis_restarts(
    gpux_settings: GpuxSettings, private_redis: PrivateStore
) -> None:
    settings = on(gpux_settings, redis_url=private_redis.url)
    reader = await create_redis(settings)
    writer = Redis.from_url(private_redis.url)
    try:
        await reader.set("k", "before")
        waiting = asyncio.ensure_future(reader.xread({"s": "0-0"}, block=20_000))
        await asyncio.sleep(0.2)  # the XREAD is blocked in Redis when the restart ends it
        await private_redis.restart()
        assert await reader.get("k") is None  # answered at once (a restart empties Redis)
        await writer.xadd("s", {"n": "1"})
        entries: Any = await asyncio.wait_for(waiting, 30)
    finally:
        await reader.aclose()
        await writer.aclose()
    assert [[stream, [fields for _, fields in items]] for stream, items in entries] == [
        [b"s", [{b"n": b"1"}]]
    ]


@pytest.fixture
async def private_runtime(
    gpux_settings: GpuxSettings, private_postgres: PrivateStore, private_redis: PrivateStore
) -> AsyncIterator[Runtime]:
    settings = on(on(gpux_settings, database_url=private_postgres.url), redis_url=private_redis.url)
    pool = await create_pool(settings)
    redis = await create_redis(settings)
    broker = make_broker(settings, "readiness-test")
    await broker.start()
    runtime = Runtime(
        "readiness-test", settings, pool, redis, broker, make_tracer_provider("t", settings)
    )
    try:
        yield runtime
    finally:
        await runtime.close()


async def test_readiness_reports_each_outage_and_recovers(
    private_runtime: Runtime, private_postgres: PrivateStore, private_redis: PrivateStore
) -> None:
    app = FastAPI()
    app.include_router(health_router(private_runtime, NEEDS))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")

    def all_ok(checks: dict[str, str]) -> bool:
        return set(checks.values()) == {"ok"}

    async with client:
        assert (await client.get("/readyz")).json()["status"] == "ready"

        await private_redis.stop()  # Redis degrades: still ready, the check says why
        degraded = await client.get("/readyz")
        assert degraded.status_code == 200, degraded.text
        assert degraded.json()["status"] == "degraded"
        assert degraded.json()["checks"]["redis"] != "ok"
        assert ready_status(degraded.json()["checks"], NEEDS | {Store.REDIS}) is None
        await private_redis.start()
        await eventually(lambda: readiness(private_runtime), all_ok, what="Redis back")

        await private_postgres.stop()  # PostgreSQL is needed: not ready
        down = await client.get("/readyz")
        assert down.status_code == 503, down.text
        assert "postgres:" in down.json()["detail"]
        assert "kafka" not in down.json()["detail"]
        await private_postgres.start()
        checks = await eventually(
            lambda: readiness(private_runtime), all_ok, what="PostgreSQL back"
        )
        assert checks == {"kafka": "ok", "postgres": "ok", "redis": "ok"}
        assert (await client.get("/readyz")).json()["status"] == "ready"


async def test_readiness_says_so_when_the_producer_sends_no_more(private_runtime: Runtime) -> None:
    """A producer whose sender task ended (as when the broker answers its request for a new
    producer id with an error aiokafka does not handle) sends nothing, though Kafka answers."""
    assert (await readiness(private_runtime))["kafka"] == "ok"
    sender = kafka_producer(private_runtime.broker)._sender.sender_task
    sender.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sender
    assert (await readiness(private_runtime))["kafka"] == "ProducerStopped"
