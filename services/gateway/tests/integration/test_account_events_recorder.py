"""The account events' recorder on PostgreSQL: an event is recorded once, with one pending
delivery per enabled endpoint of its account subscribed to its type (or to every type), and
the streams are notified at the commit."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.ids import new_id
from gpux_devinfra.testing.database import migrated_pool
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.adapters.postgres.account_events import CHANNEL
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.bootstrap import MIGRATIONS, SPEC
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_platform.clock import ManualClock
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings

pytestmark = pytest.mark.integration

FILLED = AccountEventType.ORDER_FILLED
UPDATED = AccountEventType.ORDER_UPDATED
LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
async def pool(gpux_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(gpux_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        yield pool


def unit(pool: asyncpg.Pool) -> PostgresGatewayUnitOfWork:
    return PostgresGatewayUnitOfWork(pool, ManualClock(EPOCH))


async def an_account(pool: asyncpg.Pool) -> str:
    account_id = new_id()
    async with unit(pool) as uow:
        await uow.accounts.add(
            AccountRow(account_id, "acme", (Role.BUYER,), AccountStatus.ACTIVE, EPOCH)
        )
        await uow.commit()
    return account_id


async def an_endpoint(
    pool: asyncpg.Pool, account_id: str, types: list[str], status: str = "enabled"
) -> str:
    endpoint_id = "whe_" + new_id()
    await pool.execute(
        "INSERT INTO gateway.webhook_endpoints (id, account_id, url, event_types, secret,"
        " status, created_at, updated_at) VALUES ($1, $2, 'https://example.com/hook', $3,"
        " 'whsec_test', $4, $5, $5)",
        endpoint_id,
        account_id,
        types,
        status,
        EPOCH,
    )
    return endpoint_id


def an_event(account_id: str, type_: AccountEventType = FILLED) -> AccountEvent:
    return AccountEvent.of(new_id(), account_id, type_, {"order_id": new_id(), "n": 1}, EPOCH)


async def record(pool: asyncpg.Pool, *events: AccountEvent) -> None:
    async with unit(pool) as uow:
        await uow.account_events.record(*events)
        await uow.commit()


async def test_an_event_is_recorded_once_in_order_with_its_data(pool: asyncpg.Pool) -> None:
    alice = await an_account(pool)
    first, second = an_event(alice), an_event(alice, UPDATED)
    await record(pool, first, second)
    await record(pool, first)  # a redelivered source event
    rows = await pool.fetch(
        "SELECT id, type, data, created_at FROM gateway.account_events"
        " WHERE account_id = $1 ORDER BY seq",
        alice,
    )
    assert [(r["id"], r["type"]) for r in rows] == [
        (first.id, "order.filled"),
        (second.id, UPDATED),
    ]
    assert json.loads(rows[0]["data"]) == first.data
    assert rows[0]["created_at"] == EPOCH


async def test_deliveries_go_to_the_accounts_subscribed_enabled_endpoints(
    pool: asyncpg.Pool,
) -> None:
    alice, bob = await an_account(pool), await an_account(pool)
    fills = await an_endpoint(pool, alice, ["order.filled"])
    every = await an_endpoint(pool, alice, ["*"])
    await an_endpoint(pool, alice, ["order.filled"], status="disabled")
    await an_endpoint(pool, alice, ["lease.ended", "order.updated"])
    await an_endpoint(pool, bob, ["*"])
    event = an_event(alice)
    await record(pool, event)
    await record(pool, event)
    rows = await pool.fetch(
        "SELECT * FROM gateway.webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id",
        event.id,
    )
    assert sorted(r["endpoint_id"] for r in rows) == sorted([fills, every])
    for row in rows:
        assert row["status"] == "pending"
        assert row["attempts"] == 0
        assert row["account_id"] == alice
        assert row["next_attempt_at"] == row["created_at"] == EPOCH
        assert row["id"].startswith("whd_")
        assert len(row["id"]) == 30
    assert rows[0]["id"] != rows[1]["id"]


async def test_a_delivery_is_queued_only_for_an_event_recorded_now(pool: asyncpg.Pool) -> None:
    alice = await an_account(pool)
    event = an_event(alice)
    await record(pool, event)
    await an_endpoint(pool, alice, ["*"])
    await record(pool, event)  # recorded before the endpoint existed: nothing to deliver
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM gateway.webhook_deliveries WHERE event_id = $1", event.id
        )
        == 0
    )


async def test_a_commit_that_recorded_events_notifies_the_streams(pool: asyncpg.Pool) -> None:
    heard: asyncio.Queue[str] = asyncio.Queue()

    def listen(_conn: object, _pid: int, channel: str, _payload: str) -> None:
        heard.put_nowait(channel)

    alice = await an_account(pool)
    async with pool.acquire() as listener:
        await listener.add_listener(CHANNEL, listen)
        try:
            await record(pool, an_event(alice))
            assert await asyncio.wait_for(heard.get(), timeout=10) == CHANNEL
        finally:
            await listener.remove_listener(CHANNEL, listen)


async def test_the_purge_keeps_recent_events_and_those_with_a_pending_delivery(
    pool: asyncpg.Pool,
) -> None:
    alice = await an_account(pool)
    endpoint = await an_endpoint(pool, alice, ["*"])
    # Long before any other test's events: the purge takes no one else's.
    old, pending, recent = (
        dataclasses.replace(an_event(alice), created_at=LONG_AGO) for _ in "abc"
    )
    await record(pool, old, pending)
    await pool.execute(
        "UPDATE gateway.webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL"
        " WHERE event_id = $1",
        old.id,
    )
    await record(pool, dataclasses.replace(recent, created_at=LONG_AGO + timedelta(days=2)))
    async with unit(pool) as uow:
        removed = await uow.account_events.purge(LONG_AGO + timedelta(days=1), 100_000)
        await uow.commit()
    assert removed >= 1
    kept = await pool.fetch(
        "SELECT id FROM gateway.account_events WHERE account_id = $1 ORDER BY seq", alice
    )
    assert [r["id"] for r in kept] == [pending.id, recent.id]
    deliveries = await pool.fetch(
        "SELECT event_id FROM gateway.webhook_deliveries WHERE endpoint_id = $1", endpoint
    )
    assert sorted(r["event_id"] for r in deliveries) == sorted([pending.id, recent.id])
