"""Webhooks end to end: endpoints through the real HTTP API, account events recorded in
PostgreSQL, and the gateway's dispatcher POSTing them to a real local receiver — retried
until it answers 2xx (same event id, valid signature), logged per attempt, redelivered on
request, an always failing endpoint disabled; the URL guard refuses non-public targets."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
import pytest

from gpux_contracts.ids import new_id
from gpux_contracts.webhooks import verify
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.adapters.webhook_sender import HttpWebhooks, WebhookTargets
from gpux_gateway.bootstrap import MIGRATIONS, SPEC
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_platform.clock import SystemClock
from gpux_platform.service import schema_of
from gpux_platform.settings import GpuxSettings

from .conftest import RunningGateway, serving
from .loopback_http import loopback, read_request

pytestmark = pytest.mark.integration

URL = "/v1/webhook-endpoints"


@dataclass
class Hit:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A tiny HTTP/1.1 server on 127.0.0.1: answers the statuses given in turn (the last one
    for every request after), and keeps what it got."""

    statuses: list[int]
    hits: list[Hit] = field(default_factory=list)
    port: int = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line, headers, body = await read_request(reader)
        self.hits.append(Hit(request_line.split(" ")[1], headers, body))
        n = len(self.hits) - 1
        status = self.statuses[min(n, len(self.statuses) - 1)]
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode()
        )
        await writer.drain()
        writer.close()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[Receiver]:
        async with loopback(self._serve) as self.port:
            yield self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


@pytest.fixture(scope="module")
async def gateway(module_settings: GpuxSettings) -> AsyncIterator[RunningGateway]:
    async with serving(
        module_settings,
        rate_limit="1000/minute",
        anonymous_rate_limit="10000/minute",
        webhooks_allow_private=True,
        webhooks_retry_base_s=0.2,
        webhooks_retry_cap_s=0.4,
        webhooks_retry_for_s=5.0,
        webhooks_poll_s=0.1,
    ) as served:
        yield served


@pytest.fixture(scope="module")
async def pool(module_settings: GpuxSettings) -> AsyncIterator[asyncpg.Pool]:
    async with migrated_pool(module_settings, schema_of(SPEC.name), MIGRATIONS) as pool:
        yield pool


async def sign_up(gateway: RunningGateway) -> tuple[str, str]:
    async with gateway.client() as client:
        response = await client.post("/v1/accounts", json={"name": "acme", "roles": ["buyer"]})
    assert response.status_code == 201, response.text
    body = response.json()
    return body["account"]["id"], body["api_key"]


async def record(pool: asyncpg.Pool, account_id: str) -> AccountEvent:
    """An account event recorded as the views record them (with its deliveries)."""
    clock = SystemClock()
    event = AccountEvent.of(
        new_id(), account_id, AccountEventType.LEASE_READY, {"lease_id": "l-1"}, clock.now()
    )
    async with PostgresGatewayUnitOfWork(pool, clock) as uow:
        await uow.account_events.record(event)
        await uow.commit()
    return event


async def add_endpoint(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    created = await client.post(URL, json={"url": url, "event_types": ["lease.ready"]})
    assert created.status_code == 201, created.text
    return dict(created.json())


async def test_a_failing_receiver_gets_the_event_on_the_fourth_attempt(
    gateway: RunningGateway, pool: asyncpg.Pool
) -> None:
    account_id, key = await sign_up(gateway)
    async with Receiver([500, 502, 503, 200]).serving() as receiver, gateway.client(key) as client:
        endpoint = await add_endpoint(client, receiver.url)
        secret = endpoint["secret"]
        event = await record(pool, account_id)
        await eventually(lambda: len(receiver.hits) >= 4, what="four attempts", timeout_s=20)
        log = await eventually(
            lambda: client.get(f"{URL}/{endpoint['id']}/deliveries"),
            lambda r: r.json()["items"][0]["status"] == "succeeded",
            what="the delivery succeeded",
        )
        (delivery,) = log.json()["items"]
        assert delivery["attempts"] == 4
        assert [a["status"] for a in delivery["history"]] == [500, 502, 503, 200]
        assert delivery["history"][0]["error"] == "HTTP 500"
        assert (delivery["event_id"], delivery["event_type"]) == (event.id, "lease.ready")
        assert delivery["last_status"] == 200
        assert delivery["next_attempt_at"] is None
        redelivered = await client.post(
            f"{URL}/{endpoint['id']}/deliveries/{delivery['id']}/redeliver"
        )
        assert redelivered.status_code == 202, redelivered.text
        await eventually(lambda: len(receiver.hits) >= 5, what="the redelivery")
    for hit in receiver.hits:
        assert hit.path == "/hook"
        assert hit.headers["gpux-event-id"] == event.id
        assert hit.headers["content-type"] == "application/json"
        assert hit.headers["user-agent"] == "gpux-webhooks/1"
        verify(secret, hit.headers["gpux-signature"], hit.body, now=int(time.time()))
        assert json.loads(hit.body) == event.public()


async def test_an_always_failing_endpoint_is_disabled(
    gateway: RunningGateway, pool: asyncpg.Pool
) -> None:
    account_id, key = await sign_up(gateway)
    async with Receiver([500]).serving() as receiver, gateway.client(key) as client:
        endpoint = await add_endpoint(client, receiver.url)
        await record(pool, account_id)
        shown = await eventually(
            lambda: client.get(f"{URL}/{endpoint['id']}"),
            lambda r: r.json()["status"] == "disabled",
            what="the endpoint disabled",
            timeout_s=30,
        )
        assert "no successful delivery" in shown.json()["disabled_reason"]
        log = (await client.get(f"{URL}/{endpoint['id']}/deliveries")).json()["items"]
        assert log[0]["status"] == "failed"
        assert log[0]["attempts"] == len(receiver.hits) > 3
        stopped = await record(pool, account_id)
        after = (await client.get(f"{URL}/{endpoint['id']}/deliveries")).json()["items"]
        assert stopped.id not in {d["event_id"] for d in after}
        assert len(receiver.hits) == log[0]["attempts"]
        enabled = await client.patch(f"{URL}/{endpoint['id']}", json={"status": "enabled"})
        assert enabled.json()["status"] == "enabled"
        assert enabled.json()["disabled_reason"] is None


async def test_endpoints_crud_secret_once_and_tenancy(gateway: RunningGateway) -> None:
    (_, key), (_, other) = await sign_up(gateway), await sign_up(gateway)
    async with gateway.client(key) as client, gateway.client(other) as theirs:
        headers = {"Idempotency-Key": "webhook-create-1"}
        body = {"url": "http://127.0.0.1:9/hook", "event_types": ["*"], "description": "ci"}
        first = await client.post(URL, json=body, headers=headers)
        retry = await client.post(URL, json=body, headers=headers)
        assert first.status_code == retry.status_code == 201
        assert retry.json() == first.json()
        assert first.json()["secret"].startswith("whsec_")
        assert first.headers["cache-control"] == retry.headers["cache-control"] == "no-store"
        endpoint_id = first.json()["id"]
        shown = (await client.get(f"{URL}/{endpoint_id}")).json()
        assert "secret" not in shown
        assert shown["event_types"] == ["*"]
        assert [e["id"] for e in (await client.get(URL)).json()["items"]] == [endpoint_id]
        rotation = await client.post(f"{URL}/{endpoint_id}/rotate-secret")
        assert rotation.headers["cache-control"] == "no-store"
        rotated = rotation.json()
        assert rotated["secret"] not in (first.json()["secret"], None)
        changed = await client.patch(f"{URL}/{endpoint_id}", json={"event_types": ["order.filled"]})
        assert changed.json()["event_types"] == ["order.filled"]
        for call in (
            theirs.get(f"{URL}/{endpoint_id}"),
            theirs.patch(f"{URL}/{endpoint_id}", json={"description": "x"}),
            theirs.delete(f"{URL}/{endpoint_id}"),
            theirs.post(f"{URL}/{endpoint_id}/rotate-secret"),
            theirs.get(f"{URL}/{endpoint_id}/deliveries"),
        ):
            assert (await call).status_code == 404
        assert (await theirs.get(URL)).json()["items"] == []
        assert (await theirs.post(f"{URL}/{endpoint_id}/ping")).status_code == 404
        assert (await client.delete(f"{URL}/{endpoint_id}")).status_code == 204
        assert (await client.get(f"{URL}/{endpoint_id}")).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "https://u:p@example.com/", "event_types": ["*"]}, "url"),
        ({"url": "ftp://example.com/", "event_types": ["*"]}, "url"),
        ({"url": "https://nothing.invalid/", "event_types": ["*"]}, "url"),
        ({"url": "https://example.com/", "event_types": ["lease.bogus"]}, "event_types"),
        ({"url": "https://example.com/", "event_types": []}, "event_types"),
    ],
)
async def test_refused_endpoints_are_422_naming_the_field(
    gateway: RunningGateway, body: dict[str, Any], field: str
) -> None:
    _, key = await sign_up(gateway)
    async with gateway.client(key) as client:
        refused = await client.post(URL, json=body)
    assert refused.status_code == 422, refused.text
    assert field in json.dumps(refused.json()["errors"])


async def test_the_guard_refuses_non_public_targets_at_creation_and_at_each_attempt() -> None:
    targets = WebhookTargets(allow_private=False)
    assert await targets.refusal("https://127.0.0.1/hook") == "blocked address"
    assert await targets.refusal("https://localhost:8443/hook") == "blocked address"
    assert await targets.refusal("https://[::1]/hook") == "blocked address"
    assert await targets.refusal("https://169.254.169.254/latest") == "blocked address"
    assert "https" in (await targets.refusal("http://8.8.8.8/") or "")
    assert await targets.refusal("https://8.8.8.8/hook") is None
    assert await WebhookTargets(allow_private=True).refusal("http://127.0.0.1:1/") is None
    async with Receiver([200]).serving() as receiver:
        https_url = receiver.url.replace("http://", "https://")
        sender = HttpWebhooks(targets, timeout_s=2)
        try:
            sent = await sender.send(https_url, b"{}", {})
        finally:
            await sender.aclose()
        open_sender = HttpWebhooks(WebhookTargets(allow_private=True), timeout_s=2)
        try:
            delivered = await open_sender.send(receiver.url, b"{}", {"X-Test": "1"})
        finally:
            await open_sender.aclose()
    assert (sent.status, sent.error) == (None, "blocked address")
    assert (delivered.status, delivered.error) == (200, None)
    assert len(receiver.hits) == 1
    assert receiver.hits[0].headers["host"] == f"127.0.0.1:{receiver.port}"


async def test_a_ping_reaches_the_receiver_signed(gateway: RunningGateway) -> None:
    _, key = await sign_up(gateway)
    async with Receiver([204]).serving() as receiver, gateway.client(key) as client:
        endpoint = await add_endpoint(client, receiver.url)
        answer = await client.post(f"{URL}/{endpoint['id']}/ping")
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True
    assert answer.json()["status"] == 204
    (hit,) = receiver.hits
    assert hit.headers["gpux-event-id"] == answer.json()["event_id"]
    verify(endpoint["secret"], hit.headers["gpux-signature"], hit.body, now=int(time.time()))
    assert json.loads(hit.body)["type"] == "webhook.ping"


HELD = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
    " AND state LIKE 'idle in transaction%'"
    " AND query LIKE '%webhook_endpoints WHERE id = $1 AND account_id = $2%'"
)
"""Transactions left open after reading one of an account's endpoints."""


async def test_a_ping_holds_no_transaction_while_the_receiver_answers(
    gateway: RunningGateway, pool: asyncpg.Pool
) -> None:
    _, key = await sign_up(gateway)
    arrived, answer_now = asyncio.Event(), asyncio.Event()

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        arrived.set()
        await answer_now.wait()
        writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(slow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, gateway.client(key) as client:
        endpoint = await add_endpoint(client, f"http://127.0.0.1:{port}/hook")
        pinging = asyncio.create_task(client.post(f"{URL}/{endpoint['id']}/ping"))
        async with asyncio.timeout(30):  # a guard against hanging, not an assertion
            await arrived.wait()
        held = await pool.fetchval(HELD)
        answer_now.set()
        answer = await pinging
    assert held == 0
    assert (answer.status_code, answer.json()["status"]) == (200, 204)
