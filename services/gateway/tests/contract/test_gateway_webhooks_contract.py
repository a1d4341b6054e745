"""The webhooks repository on both stores: endpoints of the account's own, the due queue
(held once taken, only enabled endpoints', stopped and resumed with the endpoint), attempts
and the delivery log newest first, requeues, the endpoint's failing run, and deletion; on
PostgreSQL, concurrent takers share the queue without taking a delivery twice.

The deliveries here are due in 2000, long before any other test's, so the queue's head is
this module's own.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from gpux_contracts.ids import new_id
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryRow,
    DeliveryStatus,
    EndpointRow,
    EndpointStatus,
    WebhookEvent,
)
from gpux_platform.clock import ManualClock

from .accounts import an_account
from .conftest import Units

pytestmark = pytest.mark.integration

T = datetime(2000, 1, 1, tzinfo=UTC)
HOLD = timedelta(seconds=30)


def an_endpoint(account_id: str, types: tuple[str, ...] = ("*",)) -> EndpointRow:
    return EndpointRow(
        id="whe_" + new_id(),
        account_id=account_id,
        url="https://hooks.example.com/x",
        event_types=types,
        description="",
        secret="whsec_" + new_id(),
        status=EndpointStatus.ENABLED,
        disabled_reason=None,
        failing_since=None,
        created_at=EPOCH,
        updated_at=EPOCH,
    )


def failed_attempt(taken: DeliveryRow) -> tuple[DeliveryRow, AttemptRow]:
    """The outcome of a failed first attempt of ``taken`` at T, retried a minute later."""
    attempt = AttemptRow(taken.id, 1, T, 500, "HTTP 500", 12)
    failed = dataclasses.replace(
        taken,
        attempts=1,
        run_failures=1,
        first_attempt_at=T,
        next_attempt_at=T + timedelta(minutes=1),
        last_attempt_at=T,
        last_status=500,
        last_error="HTTP 500",
    )
    return failed, attempt


async def record(units: Units, account_id: str, at: datetime = T) -> str:
    """An account event at ``at`` with its deliveries (the recorder's, or its memory twin's)."""
    event = AccountEvent.of(
        new_id(), account_id, AccountEventType.LEASE_READY, {"lease_id": "l-1"}, at
    )
    async with units() as uow:
        if isinstance(uow, MemoryGatewayUnitOfWork):
            shown = WebhookEvent(event.id, event.type.value, at, account_id, event.data)
            uow.webhooks.enqueue(shown, at)
        else:
            await uow.account_events.record(event)
        await uow.commit()
    return event.id


async def with_endpoint(units: Units) -> tuple[str, EndpointRow]:
    account_id = await an_account(units)
    endpoint = an_endpoint(account_id)
    async with units() as uow:
        await uow.webhooks.add_endpoint(endpoint)
        await uow.commit()
    return account_id, endpoint


async def mine(uow: GatewayUnitOfWork, endpoint: EndpointRow, now: datetime) -> list[str]:
    taken = await uow.webhooks.take_due(now, 1000, now + HOLD)
    return [t.delivery.id for t in taken if t.delivery.endpoint_id == endpoint.id]


async def test_endpoints_are_the_accounts_own(units: Units) -> None:
    alice, endpoint = await with_endpoint(units)
    bob = await an_account(units)
    async with units() as uow:
        assert await uow.webhooks.endpoint(alice, endpoint.id) == endpoint
        assert await uow.webhooks.endpoint(bob, endpoint.id) is None
        assert await uow.webhooks.endpoints_page(alice, None, 10) == [endpoint]
        assert await uow.webhooks.endpoints_page(bob, None, 10) == []
        assert not await uow.webhooks.delete_endpoint(bob, endpoint.id)
        changed = dataclasses.replace(endpoint, url="https://b.example.com/", event_types=("a",))
        await uow.webhooks.update_endpoint(changed)
        await uow.commit()
    async with units() as uow:
        assert await uow.webhooks.endpoint(alice, endpoint.id) == changed


async def test_a_taken_delivery_is_held_and_carries_its_endpoint_and_event(units: Units) -> None:
    account_id, endpoint = await with_endpoint(units)
    event_id = await record(units, account_id)
    async with units() as uow:
        taken = [
            t
            for t in await uow.webhooks.take_due(T, 1000, T + HOLD)
            if t.delivery.endpoint_id == endpoint.id
        ]
        assert await mine(uow, endpoint, T) == []
        await uow.commit()
    (due,) = taken
    assert (due.url, due.secret) == (endpoint.url, endpoint.secret)
    assert (due.event.id, due.event.type, due.event.account_id) == (
        event_id,
        "lease.ready",
        account_id,
    )
    assert due.event.data == {"lease_id": "l-1"}
    assert due.event.created_at == T
    assert (due.delivery.status, due.delivery.attempts) == (DeliveryStatus.PENDING, 0)
    async with units() as uow:
        assert await mine(uow, endpoint, T + HOLD) == [due.delivery.id]
        await uow.commit()


async def test_attempts_are_logged_and_the_log_is_newest_first(units: Units) -> None:
    account_id, endpoint = await with_endpoint(units)
    await record(units, account_id)
    await record(units, account_id, T + timedelta(seconds=1))
    async with units() as uow:
        taken = await uow.webhooks.take_due(T + timedelta(seconds=1), 1000, T + HOLD)
        first = next(t.delivery for t in taken if t.delivery.endpoint_id == endpoint.id)
        failed, attempt = failed_attempt(first)
        assert await uow.webhooks.record_attempt(failed, attempt, taken=first)
        await uow.commit()
    async with units() as uow:
        log = await uow.webhooks.deliveries_page(endpoint.id, None, 10)
        older = await uow.webhooks.deliveries_page(endpoint.id, log[0].id, 10)
        shown = await uow.webhooks.delivery(endpoint.id, first.id)
        assert await uow.webhooks.delivery("whe_other", first.id) is None
        await uow.webhooks.requeue(first.id, T)
        requeued = await uow.webhooks.delivery(endpoint.id, first.id)
        await uow.commit()
    assert [d.id for d in log] == sorted((d.id for d in log), reverse=True)
    assert len(log) == 2
    assert [d.id for d in older] == [log[1].id]
    assert shown is not None
    assert shown.history == (attempt,)
    assert (shown.attempts, shown.run_failures, shown.last_error) == (1, 1, "HTTP 500")
    assert requeued is not None
    assert (requeued.next_attempt_at, requeued.run_failures, requeued.first_attempt_at) == (
        T,
        0,
        None,
    )
    assert requeued.attempts == 1


async def test_a_disabled_endpoints_deliveries_wait_until_it_is_enabled(units: Units) -> None:
    account_id, endpoint = await with_endpoint(units)
    await record(units, account_id)
    off = dataclasses.replace(endpoint, status=EndpointStatus.DISABLED, disabled_reason="x")
    async with units() as uow:
        await uow.webhooks.update_endpoint(off)
        await uow.commit()
    async with units() as uow:
        assert await mine(uow, endpoint, T + timedelta(days=1)) == []
        (waiting,) = await uow.webhooks.deliveries_page(endpoint.id, None, 10)
        assert waiting.next_attempt_at is None
        later = T + timedelta(hours=1)
        await uow.webhooks.update_endpoint(dataclasses.replace(endpoint, updated_at=later))
        await uow.commit()
    async with units() as uow:
        assert await mine(uow, endpoint, T + timedelta(minutes=59)) == []
        assert await mine(uow, endpoint, T + timedelta(hours=1)) == [waiting.id]
        await uow.commit()


async def test_the_failing_run_keeps_its_start_until_a_success(units: Units) -> None:
    _, endpoint = await with_endpoint(units)
    async with units() as uow:
        first = await uow.webhooks.endpoint_failed(endpoint.id, T)
        again = await uow.webhooks.endpoint_failed(endpoint.id, T + timedelta(hours=1))
        await uow.webhooks.endpoint_succeeded(endpoint.id)
        after = await uow.webhooks.endpoint(endpoint.account_id, endpoint.id)
        assert await uow.webhooks.endpoint_failed("whe_none", T) is None
        await uow.commit()
    assert first is not None
    assert again is not None
    assert first.failing_since == again.failing_since == T
    assert after is not None
    assert after.failing_since is None


async def test_deleting_an_endpoint_deletes_its_deliveries(units: Units) -> None:
    account_id, endpoint = await with_endpoint(units)
    await record(units, account_id)
    async with units() as uow:
        assert await uow.webhooks.delete_endpoint(account_id, endpoint.id)
        await uow.commit()
    async with units() as uow:
        assert await uow.webhooks.deliveries_page(endpoint.id, None, 10) == []
        assert await mine(uow, endpoint, T + timedelta(days=1)) == []


async def test_concurrent_takers_never_take_one_delivery_twice(pool: asyncpg.Pool) -> None:
    clock = ManualClock(EPOCH)

    def units() -> PostgresGatewayUnitOfWork:
        return PostgresGatewayUnitOfWork(pool, clock)

    account_id, endpoint = await with_endpoint(units)
    before = T - timedelta(days=3650)  # due before every other test's deliveries
    for n in range(4):
        await record(units, account_id, before + timedelta(milliseconds=n))
    now = before + timedelta(seconds=1)
    async with units() as a, units() as b:
        first = await a.webhooks.take_due(now, 2, now + HOLD)
        second = await b.webhooks.take_due(now, 2, now + HOLD)
        await a.commit()
        await b.commit()
    ids = [t.delivery.id for t in first + second]
    assert all(t.delivery.endpoint_id == endpoint.id for t in first + second)
    assert len(ids) == len(set(ids)) == 4


async def test_an_attempt_never_rearms_a_delivery_of_an_endpoint_disabled_meanwhile(
    units: Units,
) -> None:
    account_id, endpoint = await with_endpoint(units)
    await record(units, account_id)
    async with units() as uow:
        taken = await uow.webhooks.take_due(T, 1000, T + HOLD)
        (due,) = [t.delivery for t in taken if t.delivery.endpoint_id == endpoint.id]
        await uow.commit()
    off = dataclasses.replace(endpoint, status=EndpointStatus.DISABLED, disabled_reason="x")
    async with units() as uow:
        await uow.webhooks.update_endpoint(off)
        await uow.commit()
    async with units() as uow:
        assert await uow.webhooks.record_attempt(*failed_attempt(due), taken=due)
        await uow.commit()
    async with units() as uow:
        stored = await uow.webhooks.delivery(endpoint.id, due.id)
        assert await mine(uow, endpoint, T + timedelta(days=1)) == []
    assert stored is not None
    assert (stored.status, stored.next_attempt_at, stored.attempts) == (
        DeliveryStatus.PENDING,
        None,
        1,
    )
    assert [a.n for a in stored.history] == [1]


async def test_a_redelivery_supersedes_the_attempt_in_flight(units: Units) -> None:
    account_id, endpoint = await with_endpoint(units)
    await record(units, account_id)
    async with units() as uow:
        taken = await uow.webhooks.take_due(T, 1000, T + HOLD)
        (due,) = [t.delivery for t in taken if t.delivery.endpoint_id == endpoint.id]
        await uow.webhooks.requeue(due.id, T + timedelta(seconds=5))
        await uow.commit()
    async with units() as uow:
        assert not await uow.webhooks.record_attempt(*failed_attempt(due), taken=due)
        await uow.commit()
    async with units() as uow:
        stored = await uow.webhooks.delivery(endpoint.id, due.id)
    assert stored is not None
    assert (stored.status, stored.next_attempt_at, stored.attempts, stored.history) == (
        DeliveryStatus.PENDING,
        T + timedelta(seconds=5),
        0,
        (),
    )


async def test_disabled_endpoints_due_deliveries_never_fill_the_batch(pool: asyncpg.Pool) -> None:
    clock = ManualClock(EPOCH)

    def units() -> PostgresGatewayUnitOfWork:
        return PostgresGatewayUnitOfWork(pool, clock)

    before = T - timedelta(days=7300)  # due before every other test's deliveries
    dead = [await with_endpoint(units) for _ in range(2)]
    for n, (account_id, _) in enumerate(dead * 3):
        await record(units, account_id, before + timedelta(milliseconds=n))
    healthy_account, healthy = await with_endpoint(units)
    await record(units, healthy_account, before + timedelta(seconds=1))
    # Disabled while their deliveries stayed due (as an attempt used to re-arm them).
    await pool.execute(
        "UPDATE gateway.webhook_endpoints SET status = 'disabled' WHERE id = ANY($1::text[])",
        [e.id for _, e in dead],
    )
    now = before + timedelta(seconds=2)
    async with units() as uow:
        taken = await uow.webhooks.take_due(now, 2, now + HOLD)
        await uow.commit()
    assert [t.delivery.endpoint_id for t in taken] == [healthy.id]
