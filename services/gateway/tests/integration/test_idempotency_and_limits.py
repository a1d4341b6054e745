"""Idempotent POSTs, rate limits, malformed input and the live price stream."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from gpux_contracts.topics import OFFERS_COMMANDS, ORDERS_COMMANDS, Topic

from .conftest import OFFER, ORDER, commands_about


@dataclass(frozen=True)
class Creation:
    """A creating POST by an account of ``role``, and the command it publishes on ``topic``
    about ``about`` (the payload's ``owner`` field names the caller)."""

    role: str
    path: str
    body: dict[str, Any]
    topic: Topic
    about: str
    event_type: str
    owner: str


CREATIONS = [
    Creation(
        "seller", "/v1/offers", OFFER, OFFERS_COMMANDS, "offer_id", "offer.submitted", "seller_id"
    ),
    Creation("buyer", "/v1/orders", ORDER, ORDERS_COMMANDS, "order_id", "order.placed", "buyer_id"),
]


@pytest.mark.parametrize("creation", CREATIONS, ids=lambda c: c.path)
async def test_replay_returns_identical_response_and_publishes_once(
    gateway: Any, sign_up: Any, creation: Creation
) -> None:
    account = await sign_up([creation.role])
    headers = {"Idempotency-Key": f"{creation.about[:-3]}-0001"}
    async with gateway.client(account["key"]) as client:
        first = await client.post(creation.path, json=creation.body, headers=headers)
        second = await client.post(creation.path, json=creation.body, headers=headers)
        changed = {**creation.body, "gpus": 5}
        other = await client.post(creation.path, json=changed, headers=headers)
        listing = await client.get(creation.path)
    assert first.status_code == 202
    assert (second.status_code, second.content) == (first.status_code, first.content)
    assert second.headers["Idempotent-Replayed"] == "true"
    assert other.status_code == 422
    assert other.json()["type"].endswith("/idempotency-key-reused")
    assert [o["id"] for o in listing.json()["items"]] == [first.json()["id"]]
    found = await commands_about(gateway, creation.topic, creation.about, first.json()["id"], 3.0)
    assert len(found) == 1
    assert found[0]["event_type"] == creation.event_type
    assert found[0]["payload"][creation.owner] == account["id"]


async def test_concurrent_replays_create_one_offer(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        responses = await asyncio.gather(
            *(
                client.post("/v1/offers", json=offer_body, headers={"Idempotency-Key": "same"})
                for _ in range(5)
            )
        )
        listing = await client.get("/v1/offers")
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["id"] for r in responses}) == 1
    assert len(listing.json()["items"]) == 1


async def test_sign_up_replay_shows_the_same_key_which_works(gateway: Any) -> None:
    body = {"name": "retrying client", "roles": ["buyer"]}
    async with gateway.client() as client:
        first = await client.post("/v1/accounts", json=body, headers={"Idempotency-Key": "su-1"})
        again = await client.post("/v1/accounts", json=body, headers={"Idempotency-Key": "su-1"})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    async with gateway.client(again.json()["api_key"]) as client:
        assert (await client.get("/v1/accounts/me")).json()["id"] == first.json()["account"]["id"]


async def test_the_101st_request_in_a_window_of_100_is_429(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        statuses = []
        for _ in range(100):
            response = await client.get("/v1/accounts/me")
            statuses.append(response.status_code)
        assert statuses == [200] * 100
        assert response.headers["RateLimit-Limit"] == "100"
        assert response.headers["RateLimit-Remaining"] == "0"
        limited = await client.get("/v1/accounts/me")
    assert limited.status_code == 429
    assert limited.headers["content-type"] == "application/problem+json"
    assert int(limited.headers["Retry-After"]) >= 1
    other = await sign_up(["buyer"])
    async with gateway.client(other["key"]) as client:
        assert (await client.get("/v1/accounts/me")).status_code == 200  # limits are per key


async def test_creating_answers_carry_the_rate_limit_headers_too(
    gateway: Any, sign_up: Any
) -> None:
    """A 202 that a creating route builds itself tells its rate limit like any answer."""
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        body = {"amount": "10.00", "currency": "EUR", "provider": "manual"}
        first = await client.post("/v1/topups", json=body, headers={"Idempotency-Key": "t-1"})
        again = await client.post("/v1/topups", json=body, headers={"Idempotency-Key": "t-1"})
    assert (first.status_code, again.status_code) == (202, 202)
    assert first.headers["RateLimit-Limit"] == again.headers["RateLimit-Limit"] == "100"
    assert (first.headers["RateLimit-Remaining"], again.headers["RateLimit-Remaining"]) == (
        "99",
        "98",
    )
    assert again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b'{"name": "x", "roles": ["buyer"], "extra": 1}', "application/json"),
        (b'{"name": 5, "roles": "buyer"}', "application/json"),
        (b'{"name": "x", "roles": []}', "application/json"),
        (b'{"name": "x", "roles": ["admin"]}', "application/json"),
        (b"\xff\xfe\x00garbage", "application/json"),
        (b"{not json", "application/json"),
        (b'{"name": NaN, "roles": ["buyer"]}', "application/json"),
        (b"[]", "application/json"),
        (b"name=x", "application/x-www-form-urlencoded"),
    ],
)
async def test_malformed_sign_ups_are_4xx_problems(
    gateway: Any, content: bytes, content_type: str
) -> None:
    async with gateway.client() as client:
        response = await client.post(
            "/v1/accounts", content=content, headers={"Content-Type": content_type}
        )
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    "change",
    [
        {"price_per_gpu_hour": 0.33},
        {"price_per_gpu_hour": "NaN"},
        {"price_per_gpu_hour": "Infinity"},
        {"price_per_gpu_hour": "0.12345"},
        {"price_per_gpu_hour": "-1"},
        {"price_per_gpu_hour": "1e400"},
        {"gpus": 10**30},
        {"gpus": 0},
        {"currency": "JPY"},
        {"tier": "spot"},
        {"gpu": "RTX 4090"},
        {"available_until": "2020-01-01T00:00:00Z"},
        {"available_until": "2030-01-01T00:00:00"},
    ],
)
async def test_bad_offers_are_422(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any], change: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        response = await client.post("/v1/offers", json={**offer_body, **change})
    assert response.status_code == 422, response.text
    assert response.json()["type"].endswith("/validation-error")


async def test_oversized_bodies_are_413(gateway: Any) -> None:
    async with gateway.client() as client:
        response = await client.post(
            "/v1/accounts",
            content=b'{"name": "' + b"x" * 70_000 + b'", "roles": ["buyer"]}',
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"


async def test_offers_are_private_to_their_seller(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    alice = await sign_up(["seller"])
    bob = await sign_up(["seller"])
    async with gateway.client(alice["key"]) as client:
        offer = (await client.post("/v1/offers", json=offer_body)).json()
        assert (await client.get(f"/v1/offers/{offer['id']}")).json()["status"] == "pending"
    async with gateway.client(bob["key"]) as client:
        assert (await client.get(f"/v1/offers/{offer['id']}")).status_code == 404
        assert (await client.get("/v1/offers")).json()["items"] == []
        change = {"price_per_gpu_hour": "0.10"}
        assert (await client.patch(f"/v1/offers/{offer['id']}", json=change)).status_code == 404
        assert (await client.delete(f"/v1/offers/{offer['id']}")).status_code == 404


async def test_offer_listing_is_paginated_by_cursor(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        ids = [(await client.post("/v1/offers", json=offer_body)).json()["id"] for _ in range(5)]
        first = (await client.get("/v1/offers", params={"limit": 2})).json()
        second = (
            await client.get("/v1/offers", params={"limit": 2, "cursor": first["next_cursor"]})
        ).json()
        third = (
            await client.get("/v1/offers", params={"limit": 2, "cursor": second["next_cursor"]})
        ).json()
    seen = [o["id"] for page in (first, second, third) for o in page["items"]]
    assert seen == sorted(ids)
    assert third["next_cursor"] is None


async def test_price_stream_forwards_updates_and_resumes_from_last_event_id(
    gateway: Any,
) -> None:
    # A GPU of its own: other tests of the session append to the same stream.
    gpu = f"rtx-{uuid.uuid4().hex[:8]}"
    redis = Redis.from_url(gateway.settings.redis_url, decode_responses=True)
    key = gateway.settings.redis_key("stream:prices")
    try:
        first_id = str(await redis.xadd(key, {"data": json.dumps({"gpu": gpu, "n": 1})}))
        second_id = str(await redis.xadd(key, {"data": json.dumps({"gpu": gpu, "n": 2})}))
    finally:
        await redis.aclose()

    async def read_events(last_event_id: str, count: int) -> list[tuple[str, str]]:
        events: list[tuple[str, str]] = []
        async with (
            httpx.AsyncClient(base_url=gateway.url, timeout=20) as client,
            client.stream(
                "GET", "/v1/stream/prices", headers={"Last-Event-ID": last_event_id}
            ) as response,
        ):
            assert response.headers["content-type"].startswith("text/event-stream")
            current_id = ""
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    current_id = line[3:].strip()
                elif line.startswith("data:") and json.loads(line[5:])["gpu"] == gpu:
                    events.append((current_id, line[5:].strip()))
                    if len(events) == count:
                        break
        return events

    resumed = await asyncio.wait_for(read_events(first_id, 1), timeout=20)
    assert resumed == [(second_id, json.dumps({"gpu": gpu, "n": 2}))]
    replayed = await asyncio.wait_for(read_events("0-0", 2), timeout=20)
    assert [event_id for event_id, _ in replayed] == [first_id, second_id]
    await redis.aclose()


async def test_bulk_offers_are_all_or_nothing_and_replayable(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    batch = {
        "offers": [offer_body, {**offer_body, "gpus": 2}, {**offer_body, "tier": "interruptible"}]
    }
    headers = {"Idempotency-Key": "bulk-1"}
    async with gateway.client(seller["key"]) as client:
        bad = await client.post(
            "/v1/offers/bulk", json={"offers": [offer_body, {**offer_body, "gpus": 0}]}
        )
        assert bad.status_code == 422
        assert (await client.get("/v1/offers")).json()["items"] == []
        first = await client.post("/v1/offers/bulk", json=batch, headers=headers)
        again = await client.post("/v1/offers/bulk", json=batch, headers=headers)
        listing = (await client.get("/v1/offers")).json()["items"]
    assert first.status_code == 202
    assert again.content == first.content
    assert [o["gpus"] for o in first.json()["items"]] == [4, 2, 4]
    assert sorted(o["id"] for o in listing) == sorted(o["id"] for o in first.json()["items"])
    commands = [
        await commands_about(gateway, OFFERS_COMMANDS, "offer_id", o["id"], 1.0)
        for o in first.json()["items"]
    ]
    assert [len(c) for c in commands] == [1, 1, 1]


async def test_a_command_continues_the_callers_trace_across_the_outbox(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        created = await client.post(
            "/v1/offers",
            json=offer_body,
            headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"},
        )
    commands = await commands_about(gateway, OFFERS_COMMANDS, "offer_id", created.json()["id"], 1.0)
    assert len(commands) == 1
    assert commands[0]["trace"]["traceparent"].split("-")[1] == trace_id
