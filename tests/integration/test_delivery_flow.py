"""Delivery through the real chain (catalog, pricing, matching, billing, gateway), public API
only: what a buyer gets after a trade, and how both parties hear of it.

A seller's systems are played by a small HTTP receiver: it is the seller's webhook endpoint,
gets ``lease.provisioning`` with the buyer's SSH key, checks the signature and posts the
lease's access details. The buyer follows its account stream, reads the access details, and
is charged exactly from ``ready_at``. A second lease, whose seller never posts access, fails
at its offer's provisioning timeout with nothing charged and its hold released.

The exchange's clock runs 10 times faster than the wall clock, so the shortest provisioning
timeout (60 s) passes in 6 s. Webhook signatures are made and checked on the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_contracts.money import accrued_micros
from gpux_contracts.webhooks import SIGNATURE_HEADER, verify
from gpux_devinfra.testing.http import (
    account,
    auth,
    final_order,
    funded_buyer,
    micros,
    released_wallet,
    seconds_between,
)
from gpux_devinfra.testing.http import get_until as until
from gpux_devinfra.testing.receiver import Receiver, receiving
from gpux_devinfra.testing.services import chain_at_speed
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

SPEED = 10
GPU = "h100-sxm"
OTHER_GPU = "l40s"


@pytest.fixture(scope="module")
async def chain(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """The whole chain in-process on a clock 10 times the wall clock; a client of the gateway
    that may deliver webhooks to loopback."""
    chain = (CATALOG, PRICING, MATCHING, BILLING, GATEWAY)
    async with chain_at_speed(
        module_settings, *chain, speed=SPEED, gateway={"webhooks_allow_private": True}
    ) as client:
        yield client


def public_key() -> str:
    raw = ed25519.Ed25519PrivateKey.generate().public_key()
    line = raw.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return line.decode()


@dataclass
class Stream:
    """An account's SSE stream read in the background: each event with its SSE id and the
    monotonic instant it arrived."""

    events: list[tuple[str, dict[str, Any], float]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def first(self, check: Any, timeout_s: float = 30) -> tuple[str, dict[str, Any], float]:
        async with asyncio.timeout(timeout_s):
            while True:
                for seen in self.events:
                    if check(seen[1]):
                        return seen
                self.arrived.clear()
                await self.arrived.wait()


async def _follow(client: httpx.AsyncClient, key: str, stream: Stream, after: str | None) -> None:
    headers = {**auth(key), "Accept": "text/event-stream"}
    if after is not None:
        headers["Last-Event-ID"] = after
    params = {} if after is not None else {"from": "start"}
    async with client.stream("GET", "/v1/stream/events", headers=headers, params=params) as got:
        assert got.status_code == 200, await got.aread()
        sse_id, data = "", ""
        async for line in got.aiter_lines():
            if line.startswith("id:"):
                sse_id = line[3:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
            elif line == "" and data:
                stream.events.append((sse_id, json.loads(data), time.monotonic()))
                stream.arrived.set()
                data = ""


@contextlib.asynccontextmanager
async def following(
    client: httpx.AsyncClient, key: str, after: str | None = None
) -> AsyncIterator[Stream]:
    stream = Stream()
    task = asyncio.create_task(_follow(client, key, stream, after))
    try:
        yield stream
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def buy(client: httpx.AsyncClient, key: str, gpu: str, **extra: Any) -> dict[str, Any]:
    body = {
        "gpu": gpu, "gpus": 1, "type": "market", "max_price_per_gpu_hour": "5.00",
        "currency": "EUR", "tier": "on_demand", "time_in_force": "ioc", **extra,
    }  # fmt: skip
    order = await final_order(client, key, body)
    assert order["status"] == "filled", order
    return order


async def offer(client: httpx.AsyncClient, key: str, gpu: str, timeout_s: int) -> str:
    body = {
        "gpu": gpu, "gpus": 1, "price_per_gpu_hour": "3.60", "currency": "EUR",
        "tier": "on_demand", "billing": "second", "provisioning_timeout_seconds": timeout_s,
    }  # fmt: skip
    made = await client.post("/v1/offers", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    offer_id = str(made.json()["id"])
    await until(client, f"/v1/offers/{offer_id}", lambda o: o["status"] == "live", key=key)
    return offer_id


async def test_a_lease_is_provisioned_handed_over_and_charged_from_ready(
    chain: httpx.AsyncClient,
) -> None:
    client = chain
    seller, stranger = await account(client, "seller"), await account(client, "buyer")
    buyer = await funded_buyer(client, "500.00")
    line = public_key()
    ssh = await client.post(
        "/v1/accounts/me/ssh-keys", json={"name": "laptop", "public_key": line}, headers=auth(buyer)
    )
    assert ssh.status_code == 201, ssh.text
    async with receiving() as receiver:
        hook = {"url": receiver.url, "event_types": ["lease.provisioning"]}
        made = await client.post("/v1/webhook-endpoints", json=hook, headers=auth(seller))
        assert made.status_code == 201, made.text
        endpoint = made.json()
        await offer(client, seller, GPU, 600)
        async with following(client, buyer) as stream:
            order = await buy(client, buyer, GPU, ssh_key_ids=[ssh.json()["id"]])
            lease_id = order["fills"][0]["trade_id"]
            provisioning = await _the_seller_is_told(receiver, endpoint["secret"], lease_id, line)
            assert provisioning["data"]["provisioning_deadline"] is not None
            await _the_seller_posts_access(client, seller, buyer, stranger, lease_id)
            posted = time.monotonic()
            _, ready, at = await stream.first(
                lambda e: e["type"] == "lease.ready" and e["data"]["lease_id"] == lease_id
            )
            filled = await stream.first(
                lambda e: e["type"] == "order.filled" and e["data"]["order_id"] == order["id"]
            )
            print(f"lease.ready on the buyer's stream {at - posted:.3f} s after access was posted")
            assert ready["account_id"] == filled[1]["account_id"]
        await _charged_exactly_from_ready(client, buyer, lease_id)
        await _the_stream_resumes_after_its_last_id(client, buyer, stream)
        await _another_account_sees_nothing(client, stranger, lease_id, endpoint["id"])


async def _the_seller_is_told(
    receiver: Receiver, secret: str, lease_id: str, line: str
) -> dict[str, Any]:
    (got,) = await receiver.next(1)
    verify(secret, got.headers[SIGNATURE_HEADER.lower()], got.body, now=int(time.time()))
    event: dict[str, Any] = json.loads(got.body)
    assert event["type"] == "lease.provisioning"
    assert got.headers["gpux-event-id"] == event["id"]
    assert event["data"]["lease_id"] == lease_id
    assert [k["public_key"] for k in event["data"]["ssh_keys"]] == [line]
    return event


async def _the_seller_posts_access(
    client: httpx.AsyncClient, seller: str, buyer: str, stranger: str, lease_id: str
) -> None:
    path = f"/v1/leases/{lease_id}/access"
    before = await client.get(path, headers=auth(buyer))
    assert before.status_code == 404, before.text
    details = {"host": "203.0.113.7", "port": 2222, "user": "ubuntu", "notes": "GPU 0-0"}
    for who in (buyer, stranger):  # only the lease's seller posts access
        refused = await client.post(path, json=details, headers=auth(who))
        assert refused.status_code in (403, 404), refused.text
    posted = await client.post(path, json=details, headers=auth(seller))
    assert posted.status_code in (200, 202), posted.text
    seen = await until(client, path, lambda b: b.get("host") is not None, key=buyer)
    assert (seen["host"], seen["port"], seen["user"]) == ("203.0.113.7", 2222, "ubuntu")
    for who in (seller, stranger):  # only the lease's buyer reads them
        assert (await client.get(path, headers=auth(who))).status_code == 404


async def _charged_exactly_from_ready(client: httpx.AsyncClient, buyer: str, lease_id: str) -> None:
    path = f"/v1/leases/{lease_id}"
    running = await until(client, path, lambda x: x["status"] == "running", key=buyer)
    assert running["ready_at"] is not None
    assert running["ready_at"] >= running["started_at"]
    await asyncio.sleep(1)  # 10 s of the exchange's clock
    stop = await client.post(f"{path}/stop", headers=auth(buyer))
    assert stop.status_code == 202, stop.text
    ended = await until(client, path, lambda x: x["status"] == "ended", key=buyer)
    ran = seconds_between(ended["ready_at"], ended["ended_at"])
    assert ran > 0
    assert micros(ended["total_charged"]) == accrued_micros(micros("3.60"), ran)


async def _the_stream_resumes_after_its_last_id(
    client: httpx.AsyncClient, buyer: str, seen: Stream
) -> None:
    resume_from = seen.events[-1][0]
    known = {e[1]["id"] for e in seen.events}
    async with following(client, buyer, after=resume_from) as resumed:
        _, ended, _ = await resumed.first(lambda e: e["type"] == "lease.ended")
    assert ended["id"] not in known
    assert all(e[1]["id"] not in known for e in resumed.events)


async def _another_account_sees_nothing(
    client: httpx.AsyncClient, stranger: str, lease_id: str, endpoint_id: str
) -> None:
    for path in (
        f"/v1/leases/{lease_id}/access",
        f"/v1/webhook-endpoints/{endpoint_id}",
        f"/v1/webhook-endpoints/{endpoint_id}/deliveries",
    ):
        got = await client.get(path, headers=auth(stranger))
        assert got.status_code == 404, (path, got.text)


async def test_a_lease_never_made_ready_fails_at_its_timeout_with_nothing_charged(
    chain: httpx.AsyncClient,
) -> None:
    client = chain
    seller = await account(client, "seller")
    buyer = await funded_buyer(client, "500.00")
    await offer(client, seller, OTHER_GPU, 60)
    order = await buy(client, buyer, OTHER_GPU)
    lease_id = order["fills"][0]["trade_id"]
    path = f"/v1/leases/{lease_id}"
    provisioning = await until(client, path, lambda x: isinstance(x.get("status"), str), key=buyer)
    assert provisioning["status"] == "provisioning", provisioning
    failed = await until(client, path, lambda x: x["status"] == "failed", key=buyer, timeout_s=60)
    assert failed["failure"] == "provisioning_timeout"
    assert micros(failed["total_charged"]) == 0
    eur = await released_wallet(client, buyer, "EUR")
    assert micros(eur["available"]) == micros("500.00")
    late = await client.post(
        f"{path}/access", json={"endpoint_url": "https://203.0.113.9/"}, headers=auth(seller)
    )
    assert late.status_code == 409, late.text
