"""The lease's delivery through the API, on the real topics and PostgreSQL: an order's SSH
keys, a provisioning lease and its seller's notification, the access handoff (post, read,
report, refusals) and the erasure's 410."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseFailure, LeaseOpened, LeaseReady
from gpux_contracts.topics import BILLING_COMMANDS, BILLING_LEASES
from gpux_devinfra.testing.http import get_until
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.handoff import service as handoff
from gpux_platform.broker import Outgoing
from gpux_platform.clock import SystemClock

from ..lease_events import lease_failed, lease_opened
from .conftest import ORDER, Parties, RunningGateway, commands_about, publish_as

SSH = {"host": "gpu-7.example.com", "port": 2222, "user": "ubuntu", "notes": "sudo ok"}


async def publish(gateway: RunningGateway, *payloads: Payload) -> None:
    """Publish lease events as billing does (key: lease id)."""
    now = datetime.now(UTC)
    envelopes: list[Envelope[Any]] = [
        wrap(p, producer="billing", occurred_at=now) for p in payloads
    ]
    messages = [Outgoing(BILLING_LEASES, e.payload.lease_id, e) for e in envelopes]
    await publish_as(gateway, "billing", messages)


async def register_key(gateway: RunningGateway, key: str) -> str:
    line = (
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    async with gateway.client(key) as client:
        made = await client.post("/v1/accounts/me/ssh-keys", json={"public_key": line})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def provisioning(buyer: str, seller: str, order_id: str, **fields: Any) -> LeaseOpened:
    started = datetime.now(UTC)
    values: dict[str, Any] = {
        "order_id": order_id,
        "provisioning_deadline": started + timedelta(minutes=10),
    }
    return lease_opened(buyer, seller, started_at=started, **(values | fields))


async def shown_provisioning(
    gateway: RunningGateway, parties: Parties, order_id: str
) -> tuple[LeaseOpened, str]:
    """A provisioning lease of the order's, published and shown to its seller as
    provisioning; and its path."""
    buyer, seller, _ = parties
    lease = provisioning(buyer["id"], seller["id"], order_id)
    await publish(gateway, lease)
    path = f"/v1/leases/{lease.lease_id}"
    async with gateway.client(seller["key"]) as as_seller:
        await get_until(as_seller, path, lambda b: b.get("status") == "provisioning")
    return lease, path


def failed(lease: LeaseOpened, ended_at: datetime) -> Payload:
    return lease_failed(lease, LeaseFailure.SELLER_REPORTED, ended_at=ended_at, detail="no power")


async def test_an_order_names_ssh_keys_of_the_buyers_own_only(
    gateway: RunningGateway, parties: Parties
) -> None:
    buyer, _, other = parties
    mine = await register_key(gateway, buyer["key"])
    theirs = await register_key(gateway, other["key"])
    async with gateway.client(buyer["key"]) as client:
        refused = await client.post("/v1/orders", json={**ORDER, "ssh_key_ids": [mine, theirs]})
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        assert [e["loc"] for e in refused.json()["errors"]] == [["body", "ssh_key_ids", "1"]]
        too_many = await client.post("/v1/orders", json={**ORDER, "ssh_key_ids": [mine] * 11})
        assert too_many.status_code == 422
        placed = await client.post("/v1/orders", json={**ORDER, "ssh_key_ids": [mine]})
        assert placed.status_code == 202, placed.text
        detail = (await client.get(f"/v1/orders/{placed.json()['id']}")).json()
    assert detail["ssh_key_ids"] == [mine]


async def test_the_access_handoff_from_provisioning_to_running(
    gateway: RunningGateway, parties: Parties
) -> None:
    buyer, seller, other = parties
    key_id = await register_key(gateway, buyer["key"])
    async with gateway.client(buyer["key"]) as client:
        placed = await client.post("/v1/orders", json={**ORDER, "ssh_key_ids": [key_id]})
    lease = provisioning(buyer["id"], seller["id"], placed.json()["id"])
    await publish(gateway, lease)
    path = f"/v1/leases/{lease.lease_id}"
    async with (
        gateway.client(buyer["key"]) as as_buyer,
        gateway.client(seller["key"]) as as_seller,
        gateway.client(other["key"]) as as_other,
    ):
        seen = await get_until(as_buyer, path, lambda b: b.get("status") == "provisioning")
        assert seen["provisioning_deadline"] is not None
        assert (seen["ready_at"], seen["failure"]) == (None, None)
        assert (await as_buyer.get(f"{path}/access")).json()["type"].endswith("/no-access")
        await only_the_seller_posts_valid_access(gateway, path, as_seller, (as_other, as_buyer))
        posted = await as_seller.post(f"{path}/access", json=SSH)
        assert posted.status_code == 200, posted.text
        assert posted.json()["ready_reported"] is True
        again = await as_seller.post(
            f"{path}/access", json={"endpoint_url": "https://nb.example.com/lab"}
        )
        assert again.json()["ready_reported"] is False

        for stranger in (as_seller, as_other):
            assert (await stranger.get(f"{path}/access")).status_code == 404
        got = await as_buyer.get(f"{path}/access")
        assert got.status_code == 200, got.text
        assert got.headers["cache-control"] == "no-store"
        assert (got.json()["endpoint_url"], got.json()["host"]) == (
            "https://nb.example.com/lab",
            None,
        )

        await publish(
            gateway,
            LeaseReady(
                lease_id=lease.lease_id,
                buyer_id=buyer["id"],
                seller_id=seller["id"],
                ready_at=datetime.now(UTC),
            ),
        )
        running = await get_until(as_seller, path, lambda b: b.get("status") == "running")
        assert running["ready_at"] is not None
        late_failure = await as_seller.post(f"{path}/failure", json={"detail": "x"})
        assert late_failure.status_code == 409
    sent = await commands_about(gateway, BILLING_COMMANDS, "lease_id", lease.lease_id, 1.0)
    assert [(r["event_type"], r["payload"]["buyer_id"]) for r in sent] == [
        ("lease.ready_reported", buyer["id"])
    ]
    await seller_heard(gateway, seller["id"], lease.lease_id, key_id)


async def only_the_seller_posts_valid_access(
    gateway: RunningGateway,
    path: str,
    as_seller: httpx.AsyncClient,
    strangers: tuple[httpx.AsyncClient, ...],
) -> None:
    """Bad details are 422s, anyone but the seller gets 404, a read-only seller key 403."""
    for body in ({**SSH, "port": 0}, {**SSH, "endpoint_url": "https://x.example"}, {}):
        refused = await as_seller.post(f"{path}/access", json=body)
        assert refused.status_code == 422, body
        assert refused.json()["errors"], body
    for stranger in strangers:
        assert (await stranger.post(f"{path}/access", json=SSH)).status_code == 404
        assert (await stranger.post(f"{path}/failure", json={})).status_code == 404
    made = await as_seller.post("/v1/accounts/me/keys", json={"scopes": ["read"]})
    async with gateway.client(made.json()["api_key"]) as read_only:
        refused = await read_only.post(f"{path}/access", json=SSH)
        assert (refused.status_code, refused.json()["type"]) == (
            403,
            "https://gpux.dev/problems/scope-required",
        )


async def seller_heard(gateway: RunningGateway, seller_id: str, lease_id: str, key: str) -> None:
    """The seller's ``lease.provisioning`` names the lease and the order's one key."""
    conn = await asyncpg.connect(gateway.settings.database_url.get_secret_value())
    try:
        rows = await conn.fetch(
            "SELECT type, data::text AS data FROM gateway.account_events"
            " WHERE account_id = $1 AND type = 'lease.provisioning'",
            seller_id,
        )
    finally:
        await conn.close()
    assert len(rows) == 1
    assert lease_id in rows[0]["data"]
    assert key in rows[0]["data"]


async def test_a_failure_report_fails_nothing_twice_and_a_failed_lease_refuses_access(
    gateway: RunningGateway, parties: Parties
) -> None:
    _, seller, _ = parties
    lease, path = await shown_provisioning(gateway, parties, "order-x")
    async with gateway.client(seller["key"]) as as_seller:
        for _ in range(2):
            reported = await as_seller.post(f"{path}/failure", json={"detail": "PSU died"})
            assert reported.status_code == 202, reported.text
        assert (
            await as_seller.post(f"{path}/failure", json={"detail": "x" * 501})
        ).status_code == 422
        await publish(gateway, failed(lease, datetime.now(UTC)))
        shown = await get_until(as_seller, path, lambda b: b.get("status") == "failed")
        assert (shown["failure"], shown["failure_detail"]) == ("seller_reported", "no power")
        refused = await as_seller.post(f"{path}/access", json=SSH)
        assert refused.status_code == 409
        assert refused.json()["type"].endswith("/lease-failed")
    sent = await commands_about(gateway, BILLING_COMMANDS, "lease_id", lease.lease_id, 1.0)
    assert [(r["event_type"], r["payload"]["detail"]) for r in sent] == [
        ("lease.failure_reported", "PSU died")
    ]


async def test_access_is_erased_after_the_retention_and_answers_410(
    gateway: RunningGateway, parties: Parties
) -> None:
    buyer, seller, _ = parties
    lease, path = await shown_provisioning(gateway, parties, "order-y")
    async with gateway.client(seller["key"]) as as_seller:
        assert (await as_seller.post(f"{path}/access", json=SSH)).status_code == 200
        await publish(gateway, failed(lease, datetime.now(UTC) - timedelta(days=2)))
        await get_until(as_seller, path, lambda b: b.get("status") == "failed")
    async with gateway.client(buyer["key"]) as as_buyer:
        assert (await as_buyer.get(f"{path}/access")).json()["host"] == "gpu-7.example.com"
        pool = await asyncpg.create_pool(
            gateway.settings.database_url.get_secret_value(), min_size=1, max_size=1
        )
        try:
            async with PostgresGatewayUnitOfWork(pool, SystemClock()) as uow:
                erased = await handoff.erase_expired(uow, gateway.settings.access_retention_s)
                await uow.commit()
        finally:
            await pool.close()
        assert erased >= 1
        gone = await as_buyer.get(f"{path}/access")
    assert gone.status_code == 410
    assert gone.json()["type"].endswith("/access-erased")
