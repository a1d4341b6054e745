"""GET /v1/stream/events on a real gateway: an account's recorded events are delivered, a
stream resumed with Last-Event-ID (or ?after=) gets only later ones, one from now none that
committed before it opened, another account's never appear, a view consumer's event
reaches its account, and a bad cursor is a 400."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_contracts.billing import BalanceChanged
from gpux_contracts.events import wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_BALANCES
from gpux_devinfra.sse import SseEvent, SseParser
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_platform.broker import Outgoing, make_broker, publish_many
from gpux_platform.clock import SystemClock

from .conftest import RunningGateway, SignUp

pytestmark = pytest.mark.integration

FILLED = AccountEventType.ORDER_FILLED


@pytest.fixture
async def pool(gateway: RunningGateway) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(gateway.settings, max_size=2) as pool:
        yield pool


async def record(pool: asyncpg.Pool, account_id: str, n: int) -> AccountEvent:
    event = AccountEvent.of(new_id(), account_id, FILLED, {"n": n}, datetime.now(UTC))
    async with PostgresGatewayUnitOfWork(pool, SystemClock()) as uow:
        await uow.account_events.record(event)
        await uow.commit()
    return event


@dataclass
class Reader:
    """What one client of the stream read."""

    events: list[SseEvent] = field(default_factory=list)
    status: int | None = None
    retry_ms: int | None = None

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(e.data) for e in self.events]


@contextlib.asynccontextmanager
async def reading(
    gateway: RunningGateway, key: str, headers: dict[str, str] | None = None, query: str = ""
) -> AsyncIterator[Reader]:
    """A client reading the stream in the background for the block's time."""
    reader = Reader()
    parser = SseParser()

    async def read() -> None:
        async with (
            gateway.client(key) as client,
            client.stream("GET", "/v1/stream/events" + query, headers=headers or {}) as response,
        ):
            reader.status = response.status_code
            async for line in response.aiter_lines():
                if (event := parser.line(line)) is not None:
                    reader.events.append(event)
                reader.retry_ms = parser.retry_ms

    task = asyncio.create_task(read())
    try:
        await eventually(lambda: reader.retry_ms, what="the stream opened")
        yield reader
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def count(reader: Reader, n: int) -> list[dict[str, Any]]:
    await eventually(lambda: len(reader.events) >= n, what=f"{n} events")
    return reader.bodies()


async def test_recorded_events_are_delivered_and_a_resume_gets_only_later_ones(
    gateway: RunningGateway, sign_up: SignUp, pool: asyncpg.Pool
) -> None:
    alice, bob = await sign_up(["buyer"]), await sign_up(["buyer"])
    async with reading(gateway, alice["key"]) as alices, reading(gateway, bob["key"]) as bobs:
        first = await record(pool, alice["id"], 1)
        await record(pool, bob["id"], 1)
        second = await record(pool, alice["id"], 2)
        bodies = await count(alices, 2)
        await count(bobs, 1)
    assert [b["id"] for b in bodies] == [first.id, second.id]
    assert bodies[0] == first.public()
    assert [e.event for e in alices.events] == ["order.filled", "order.filled"]
    assert all(b["account_id"] == alice["id"] for b in bodies)
    assert [b["account_id"] for b in bobs.bodies()] == [bob["id"]]
    seen = alices.events[0].id
    assert seen is not None
    third = await record(pool, alice["id"], 3)
    async with reading(gateway, alice["key"], headers={"Last-Event-ID": seen}) as resumed:
        assert [b["id"] for b in await count(resumed, 2)] == [second.id, third.id]
    async with reading(gateway, alice["key"], query=f"?after={alices.events[1].id}") as after:
        assert [b["id"] for b in await count(after, 1)] == [third.id]


async def test_without_a_cursor_a_stream_starts_now_or_from_the_start(
    gateway: RunningGateway, sign_up: SignUp, pool: asyncpg.Pool
) -> None:
    alice = await sign_up(["buyer"])
    old = await record(pool, alice["id"], 1)
    async with reading(gateway, alice["key"], query="?from=start") as everything:
        assert [b["id"] for b in await count(everything, 1)] == [old.id]
    async with reading(gateway, alice["key"]) as from_now:
        new = await record(pool, alice["id"], 2)
        assert [b["id"] for b in await count(from_now, 1)] == [new.id]


async def test_from_now_sends_nothing_that_committed_before_the_stream_opened(
    gateway: RunningGateway, sign_up: SignUp, pool: asyncpg.Pool
) -> None:
    """An older transaction still running holds reads back (``pg_snapshot_xmin``): an event
    committed meanwhile, before the stream opened, is after its cursor yet never sent."""
    alice = await sign_up(["buyer"])
    async with pool.acquire() as older:
        running = older.transaction()
        await running.start()
        await older.fetchval("SELECT pg_current_xact_id()")  # takes a txid: xmin stays below
        before = await record(pool, alice["id"], 1)
        async with reading(gateway, alice["key"]) as from_now:
            await running.rollback()
            after = await record(pool, alice["id"], 2)
            assert [b["id"] for b in await count(from_now, 1)] == [after.id]
    assert before.id not in [b["id"] for b in from_now.bodies()]


async def test_a_balance_billing_reports_reaches_its_account(
    gateway: RunningGateway, sign_up: SignUp
) -> None:
    alice = await sign_up(["buyer"])
    change = BalanceChanged(
        account_id=alice["id"],
        currency=Currency.EUR,
        available=Decimal("41.5"),
        held=Decimal("0"),
        as_of=datetime.now(UTC),
    )
    envelope = wrap(change, producer="billing", occurred_at=datetime.now(UTC))
    async with reading(gateway, alice["key"]) as reader:
        broker = make_broker(gateway.settings, "billing")
        await broker.start()
        try:
            key = f"{alice['id']}|EUR"
            await publish_many(
                broker, gateway.settings, [Outgoing(BILLING_BALANCES, key, envelope)]
            )
        finally:
            await broker.stop()
        (body,) = await count(reader, 1)
    assert body["type"] == "balance.updated"
    assert body["data"]["available"] == "41.5"
    assert body["data"]["currency"] == "EUR"


@pytest.mark.parametrize("cursor", ["x", "1", "1.2.3", "-1.2", "99999999999999999999.1"])
async def test_a_bad_cursor_is_a_400_problem(
    gateway: RunningGateway, sign_up: SignUp, cursor: str
) -> None:
    alice = await sign_up(["buyer"])
    async with gateway.client(alice["key"]) as client:
        response = await client.get("/v1/stream/events", headers={"Last-Event-ID": cursor})
    assert response.status_code == 400
    assert response.json()["type"].endswith("bad-cursor")


async def test_the_stream_needs_a_key(gateway: RunningGateway) -> None:
    async with gateway.client() as client:
        response = await client.get("/v1/stream/events")
    assert response.status_code == 401
