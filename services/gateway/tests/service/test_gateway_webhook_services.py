"""Webhook endpoints on the memory unit of work: creation (idempotent, the secret kept out of
the stored answer), reads without the secret, changes and re-enabling, rotation, deletion,
the delivery log and redelivery — all within the caller's account — and the dispatcher's
rounds: success, retries with backoff, failure after the window, disabling an endpoint."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta

import pytest

from gpux_contracts.accounts import Role
from gpux_contracts.webhooks import verify
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.domain.webhooks import RetryPolicy
from gpux_gateway.webhooks import service
from gpux_gateway.webhooks.dispatch import DispatchConfig, Sent, dispatch_once
from gpux_gateway.webhooks.repository import DeliveryStatus, EndpointStatus, WebhookEvent
from gpux_gateway.webhooks.schemas import WebhookEndpointChange
from gpux_platform.clock import ManualClock
from gpux_platform.problems import ProblemError

from .units import with_accounts

pytestmark = pytest.mark.unit

ALICE, BOB = "acct-alice", "acct-bob"
URL = "https://hooks.example.com/gpux"
CONFIG = DispatchConfig(
    policy=RetryPolicy(base_s=30, cap_s=600, retry_for=timedelta(hours=1)), batch=8
)


def unit() -> MemoryGatewayUnitOfWork:
    return with_accounts({ALICE: Role.BUYER, BOB: Role.BUYER})


def once(key: str | None, account_id: str = ALICE) -> Once:
    return Once(scope=account_id, key=key, fingerprint="body-1", ttl=timedelta(hours=48))


async def add(
    uow: MemoryGatewayUnitOfWork,
    account_id: str = ALICE,
    key: str | None = None,
    types: tuple[str, ...] = ("*",),
) -> str:
    async with uow:
        outcome = await service.create(
            uow,
            account_id,
            url=URL,
            event_types=types,
            description="d",
            once=once(key, account_id),
        )
        await uow.commit()
    assert outcome.status_code == 201
    return str(outcome.body["id"])


def event(n: int = 1, type_: str = "lease.ready", account_id: str = ALICE) -> WebhookEvent:
    return WebhookEvent(f"evt_{n}", type_, EPOCH, account_id, {"lease_id": f"l{n}"})


async def queued() -> tuple[MemoryGatewayUnitOfWork, str, str]:
    """A unit with an endpoint of Alice's and one delivery queued for it: the unit, the
    endpoint's id and the delivery's."""
    uow = unit()
    endpoint_id = await add(uow)
    (delivery_id,) = uow.webhooks.enqueue(event(), EPOCH)
    return uow, endpoint_id, delivery_id


def standing(uow: MemoryGatewayUnitOfWork, delivery_id: str) -> tuple[object, ...]:
    """A delivery's status, next attempt and attempts."""
    delivery = uow.state.webhook_deliveries[delivery_id]
    return delivery.status, delivery.next_attempt_at, delivery.attempts


STOPPED_AFTER_ONE = (DeliveryStatus.PENDING, None, 1)
"""Pending with no next attempt, after one attempt: a delivery its disabled endpoint stopped."""


async def test_creation_stores_the_endpoint_and_keeps_the_secret_out_of_the_answer() -> None:
    uow = unit()
    endpoint_id = await add(uow, key="k1")
    stored = uow.state.webhook_endpoints[endpoint_id]
    assert endpoint_id.startswith("whe_")
    assert stored.secret.startswith("whsec_")
    assert len(stored.secret) > 40
    assert (stored.url, stored.event_types, stored.status) == (URL, ("*",), EndpointStatus.ENABLED)
    ((response, _),) = uow.state.responses.values()
    assert "secret" not in response.body
    async with uow:
        assert await service.secret(uow, ALICE, endpoint_id) == stored.secret
        assert await service.secret(uow, BOB, endpoint_id) is None
        shown = await service.get(uow, ALICE, endpoint_id)
    assert "secret" not in shown.model_dump()


async def test_an_idempotency_key_replays_the_first_endpoint() -> None:
    uow = unit()
    first, again = await add(uow, key="same"), await add(uow, key="same")
    assert first == again
    assert len(uow.state.webhook_endpoints) == 1
    assert await add(uow, key=None) != first


async def test_another_accounts_endpoint_is_404_everywhere() -> None:
    uow = unit()
    theirs = await add(uow, BOB)
    uow.state.webhook_deliveries.clear()
    async with uow:
        calls = [
            service.get(uow, ALICE, theirs),
            service.update(uow, ALICE, theirs, WebhookEndpointChange(description="x"), None),
            service.rotate_secret(uow, ALICE, theirs),
            service.delete(uow, ALICE, theirs),
            service.deliveries(uow, ALICE, theirs, limit=10, cursor=None),
            service.redeliver(uow, ALICE, theirs, "whd_x"),
        ]
        for call in calls:
            with pytest.raises(ProblemError) as refused:
                await call
            assert refused.value.status == 404
        page = await service.page(uow, ALICE, limit=10, cursor=None)
    assert page.items == []
    assert theirs in uow.state.webhook_endpoints


async def test_pages_in_id_order() -> None:
    uow = unit()
    ids = [await add(uow) for _ in range(3)]
    async with uow:
        first = await service.page(uow, ALICE, limit=2, cursor=None)
        rest = await service.page(uow, ALICE, limit=2, cursor=first.next_cursor)
    assert [e.id for e in first.items + rest.items] == sorted(ids)
    assert rest.next_cursor is None


async def test_changes_rotation_and_deletion() -> None:
    uow = unit()
    endpoint_id = await add(uow)
    old_secret = uow.state.webhook_endpoints[endpoint_id].secret
    async with uow:
        change = WebhookEndpointChange(url="https://other.example.com/h", description="new")
        changed = await service.update(uow, ALICE, endpoint_id, change, ("lease.ready",))
        rotated = await service.rotate_secret(uow, ALICE, endpoint_id)
        await uow.commit()
    assert (changed.url, changed.event_types, changed.description) == (
        "https://other.example.com/h",
        ["lease.ready"],
        "new",
    )
    assert rotated.secret != old_secret
    assert uow.state.webhook_endpoints[endpoint_id].secret == rotated.secret
    async with uow:
        await service.delete(uow, ALICE, endpoint_id)
        await uow.commit()
    assert endpoint_id not in uow.state.webhook_endpoints


class Receiver:
    """A sender that answers each POST with the next status given (the last one after)."""

    def __init__(self, *statuses: int | None) -> None:
        self.statuses = list(statuses)
        self.posts: list[tuple[str, bytes, dict[str, str]]] = []

    async def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Sent:
        self.posts.append((url, body, dict(headers)))
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return Sent(status, None if status == 200 else "HTTP 500", 3)


async def test_a_delivery_retries_with_backoff_then_succeeds_signed() -> None:
    uow, endpoint_id, delivery_id = await queued()
    receiver, clock = Receiver(500, 500, 200), uow.clock
    assert isinstance(clock, ManualClock)
    for _ in range(3):
        assert await dispatch_once(lambda: uow, receiver, clock, CONFIG, lambda: 0.0) == 1
        assert await dispatch_once(lambda: uow, receiver, clock, CONFIG, lambda: 0.0) == 0
        due = uow.state.webhook_deliveries[delivery_id].next_attempt_at
        if due is not None:
            clock.advance(due - clock.now())
    delivery = uow.state.webhook_deliveries[delivery_id]
    assert delivery.status is DeliveryStatus.SUCCEEDED
    assert [a.status for a in uow.state.webhook_attempts[delivery_id]] == [500, 500, 200]
    log = uow.state.webhook_attempts[delivery_id]
    gaps = [b.at - a.at for a, b in itertools.pairwise(log)]
    assert gaps == [timedelta(seconds=30), timedelta(seconds=60)]
    secret = uow.state.webhook_endpoints[endpoint_id].secret
    for _, body, headers in receiver.posts:
        assert headers["Gpux-Event-Id"] == "evt_1"
        verify(secret, headers["Gpux-Signature"], body, now=int(clock.now().timestamp()))
    assert uow.state.webhook_endpoints[endpoint_id].failing_since is None


async def test_an_always_failing_endpoint_fails_the_delivery_and_is_disabled() -> None:
    uow, endpoint_id, delivery_id = await queued()
    receiver, clock = Receiver(500), uow.clock
    assert isinstance(clock, ManualClock)
    while uow.state.webhook_deliveries[delivery_id].status is DeliveryStatus.PENDING:
        await dispatch_once(lambda: uow, receiver, clock, CONFIG, lambda: 0.0)
        due = uow.state.webhook_deliveries[delivery_id].next_attempt_at
        if due is not None:
            clock.advance(due - clock.now())
    assert uow.state.webhook_deliveries[delivery_id].status is DeliveryStatus.FAILED
    endpoint = uow.state.webhook_endpoints[endpoint_id]
    assert endpoint.status is EndpointStatus.DISABLED
    uow.state.webhook_endpoints[endpoint_id] = dataclasses.replace(
        endpoint, status=EndpointStatus.ENABLED
    )
    (later,) = uow.webhooks.enqueue(event(2), clock.now())
    uow.state.webhook_endpoints[endpoint_id] = endpoint
    async with uow:
        await uow.webhooks.update_endpoint(endpoint)
        await uow.commit()
    endpoint = uow.state.webhook_endpoints[endpoint_id]
    assert endpoint.status is EndpointStatus.DISABLED
    assert "no successful delivery" in (endpoint.disabled_reason or "")
    stopped = uow.state.webhook_deliveries[later]
    assert (stopped.status, stopped.next_attempt_at) == (DeliveryStatus.PENDING, None)
    async with uow:
        with pytest.raises(ProblemError) as refused:
            await service.redeliver(uow, ALICE, endpoint_id, delivery_id)
        assert refused.value.status == 409
        enabled = await service.update(
            uow, ALICE, endpoint_id, WebhookEndpointChange(status=EndpointStatus.ENABLED), None
        )
        await uow.commit()
    assert (enabled.status, enabled.disabled_reason, enabled.failing_since) == (
        EndpointStatus.ENABLED,
        None,
        None,
    )
    assert uow.state.webhook_deliveries[later].next_attempt_at == clock.now()


async def test_redelivery_starts_a_new_run_and_the_log_is_newest_first() -> None:
    uow = unit()
    endpoint_id = await add(uow)
    (first,) = uow.webhooks.enqueue(event(1), EPOCH)
    (second,) = uow.webhooks.enqueue(event(2), EPOCH)
    receiver, clock = Receiver(200), uow.clock
    await dispatch_once(lambda: uow, receiver, clock, CONFIG, lambda: 0.0)
    async with uow:
        again = await service.redeliver(uow, ALICE, endpoint_id, first)
        await uow.commit()
    assert (again.status, again.attempts, again.next_attempt_at) == (
        DeliveryStatus.PENDING,
        1,
        EPOCH,
    )
    await dispatch_once(lambda: uow, receiver, clock, CONFIG, lambda: 0.0)
    async with uow:
        log = await service.deliveries(uow, ALICE, endpoint_id, limit=1, cursor=None)
        rest = await service.deliveries(uow, ALICE, endpoint_id, limit=1, cursor=log.next_cursor)
    assert [d.id for d in log.items + rest.items] == sorted([first, second], reverse=True)
    shown = {d.id: d for d in log.items + rest.items}
    assert [a.n for a in shown[first].history] == [1, 2]
    assert shown[first].status is DeliveryStatus.SUCCEEDED
    assert len(receiver.posts) == 3


async def test_only_subscribed_enabled_endpoints_get_a_delivery() -> None:
    uow = unit()
    ready = await add(uow, types=("lease.ready",))
    await add(uow, types=("order.filled",))
    off = await add(uow)
    await add(uow, BOB)
    uow.state.webhook_endpoints[off] = dataclasses.replace(
        uow.state.webhook_endpoints[off], status=EndpointStatus.DISABLED
    )
    uow.webhooks.enqueue(event(), EPOCH)
    assert [d.endpoint_id for d in uow.state.webhook_deliveries.values()] == [ready]


async def test_a_ping_posts_a_signed_test_event_and_queues_nothing() -> None:
    uow = unit()
    endpoint_id = await add(uow)
    receiver = Receiver(503)
    async with uow:
        request = await service.ping_request(uow, ALICE, endpoint_id)
        with pytest.raises(ProblemError) as refused:
            await service.ping_request(uow, BOB, endpoint_id)
    answer = await service.ping(request, receiver)
    assert refused.value.status == 404
    assert (answer.delivered, answer.status, answer.error) == (False, 503, "HTTP 500")
    ((url, body, headers),) = receiver.posts
    assert url == URL
    assert headers["Gpux-Event-Id"] == answer.event_id
    secret = uow.state.webhook_endpoints[endpoint_id].secret
    verify(secret, headers["Gpux-Signature"], body, now=int(EPOCH.timestamp()))
    assert b'"type":"webhook.ping"' in body
    assert uow.state.webhook_deliveries == {}


class ByUrl:
    """A sender answering 200 at ``ok`` and 500 anywhere else, calling ``during`` (if any)
    while a POST is in flight."""

    def __init__(self, ok: str, during: Callable[[], Awaitable[None]] | None = None) -> None:
        self.ok, self.during = ok, during
        self.posts: list[str] = []

    async def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Sent:
        self.posts.append(url)
        if self.during is not None:
            await self.during()
        return Sent(200, None, 1) if url == self.ok else Sent(500, "HTTP 500", 1)


async def add_at(uow: MemoryGatewayUnitOfWork, account_id: str, url: str) -> str:
    endpoint_id = await add(uow, account_id)
    endpoint = uow.state.webhook_endpoints[endpoint_id]
    uow.state.webhook_endpoints[endpoint_id] = dataclasses.replace(endpoint, url=url)
    return endpoint_id


async def test_dead_endpoints_deliveries_never_starve_a_healthy_one() -> None:
    uow = unit()
    dead = [await add_at(uow, ALICE, f"https://dead{n}.example.com/") for n in range(2)]
    for n in range(3):
        uow.webhooks.enqueue(event(n), EPOCH)
    await add_at(uow, BOB, "https://ok.example.com/")
    for endpoint_id in dead:  # disabled with their deliveries left due
        uow.state.webhook_endpoints[endpoint_id] = dataclasses.replace(
            uow.state.webhook_endpoints[endpoint_id], status=EndpointStatus.DISABLED
        )
    (healthy,) = uow.webhooks.enqueue(event(9, account_id=BOB), EPOCH + timedelta(seconds=1))
    assert isinstance(uow.clock, ManualClock)
    uow.clock.advance(timedelta(seconds=1))
    receiver = ByUrl("https://ok.example.com/")
    small = dataclasses.replace(CONFIG, batch=2)
    assert await dispatch_once(lambda: uow, receiver, uow.clock, small, lambda: 0.0) == 1
    assert receiver.posts == ["https://ok.example.com/"]
    assert uow.state.webhook_deliveries[healthy].status is DeliveryStatus.SUCCEEDED


async def test_an_endpoint_disabled_in_a_round_keeps_all_its_deliveries_stopped() -> None:
    uow = unit()
    endpoint_id = await add_at(uow, ALICE, "https://dying.example.com/")
    failing_for = CONFIG.policy.retry_for + timedelta(minutes=1)
    uow.state.webhook_endpoints[endpoint_id] = dataclasses.replace(
        uow.state.webhook_endpoints[endpoint_id], failing_since=EPOCH - failing_for
    )
    ids = [d for n in range(3) for d in uow.webhooks.enqueue(event(n), EPOCH)]
    receiver = ByUrl("https://ok.example.com/")
    assert await dispatch_once(lambda: uow, receiver, uow.clock, CONFIG, lambda: 0.0) == 3
    assert uow.state.webhook_endpoints[endpoint_id].status is EndpointStatus.DISABLED
    for delivery_id in ids:
        assert standing(uow, delivery_id) == STOPPED_AFTER_ONE


async def test_an_endpoint_disabled_by_its_account_during_an_attempt_stays_stopped() -> None:
    uow, endpoint_id, delivery_id = await queued()

    async def disable() -> None:
        async with uow:
            off = WebhookEndpointChange(status=EndpointStatus.DISABLED)
            await service.update(uow, ALICE, endpoint_id, off, None)
            await uow.commit()

    receiver = ByUrl("https://ok.example.com/", during=disable)
    await dispatch_once(lambda: uow, receiver, uow.clock, CONFIG, lambda: 0.0)
    assert standing(uow, delivery_id) == STOPPED_AFTER_ONE


async def test_a_redelivery_during_the_attempt_supersedes_it() -> None:
    uow, endpoint_id, delivery_id = await queued()

    async def redeliver() -> None:
        async with uow:
            await service.redeliver(uow, ALICE, endpoint_id, delivery_id)
            await uow.commit()

    await dispatch_once(lambda: uow, ByUrl(URL, during=redeliver), uow.clock, CONFIG)
    assert standing(uow, delivery_id) == (DeliveryStatus.PENDING, EPOCH, 0)
    receiver = ByUrl(URL)
    assert await dispatch_once(lambda: uow, receiver, uow.clock, CONFIG) == 1
    delivered = uow.state.webhook_deliveries[delivery_id]
    assert (delivered.status, delivered.attempts) == (DeliveryStatus.SUCCEEDED, 1)
    assert receiver.posts == [URL]
