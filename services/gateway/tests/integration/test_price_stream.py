"""The live price stream against real Redis: it stays up when idle, sends only changes, and
resumes from Last-Event-ID on an idle and on a busy market.

Quotes are appended as pricing appends them (``XADD`` of the quote's JSON); each test uses
books of its own, so entries of other tests in the same namespace are told apart by GPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from redis.asyncio import Redis

from gpux_gateway.streams.service import HEARTBEAT_S, RETRY_MS
from gpux_platform.redis_keys import PRICES_STREAM

from .conftest import RunningGateway

IDLE_S = 60
"""How long the idle stream is read at least (the first ping after it ends the read)."""


def quote(gpu: str, price: str, *, tier: str = "on_demand") -> str:
    """A quote as pricing writes it (its own ``as_of`` each time)."""
    best = {"offer_id": "o-1", "price": price, "currency": "EUR", "prices": {"EUR": price}}
    return json.dumps(
        {
            "gpu": gpu,
            "tier": tier,
            "region": "*",
            "best": {**best, "gpus": 1},
            "depth": [{"prices": {"EUR": price}, "gpus": 1}],
            "as_of": datetime.now(UTC).isoformat(),
        }
    )


@dataclass
class Received:
    """What a client of the stream read: its events (id, data), pings and ``retry:`` fields."""

    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pings: int = 0
    retries: list[int] = field(default_factory=list)
    ended: bool = False

    def of(self, gpu: str) -> list[tuple[str, dict[str, Any]]]:
        return [(i, d) for i, d in self.events if d.get("gpu") == gpu]


async def read_stream(
    gateway: RunningGateway,
    received: Received,
    *,
    last_event_id: str | None = None,
    until: Any = None,
) -> None:
    """Read the stream into ``received`` until ``until(received)`` holds (or it ends)."""
    headers = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
    async with (
        httpx.AsyncClient(base_url=gateway.url, timeout=HEARTBEAT_S * 2) as client,
        client.stream("GET", "/v1/stream/prices", headers=headers) as response,
    ):
        assert response.status_code == 200
        current = ""
        async for line in response.aiter_lines():
            if line.startswith(": ping"):
                received.pings += 1
            elif line.startswith("retry:"):
                received.retries.append(int(line[6:]))
            elif line.startswith("id:"):
                current = line[3:].strip()
            elif line.startswith("data:"):
                received.events.append((current, json.loads(line[5:])))
            if until is not None and until(received):
                return
    received.ended = True


@contextlib.asynccontextmanager
async def stream_redis(gateway: RunningGateway) -> AsyncIterator[tuple[Redis, str]]:
    redis = Redis.from_url(gateway.settings.redis_url, decode_responses=True)
    try:
        yield redis, gateway.settings.redis_key(PRICES_STREAM)
    finally:
        await redis.aclose()


def new_gpu() -> str:
    return f"gpu-{uuid.uuid4().hex[:8]}"


async def connected(received: Received) -> None:
    """Wait until the stream has opened (its ``retry:`` field came)."""
    while not received.retries:  # noqa: ASYNC110 - the reader task fills it
        await asyncio.sleep(0.05)


async def test_an_idle_stream_stays_open_past_a_minute_and_sends_no_duplicate(
    gateway: RunningGateway,
) -> None:
    gpu = new_gpu()
    received = Received()
    started = time.monotonic()
    reader = asyncio.create_task(
        read_stream(gateway, received, until=lambda _: time.monotonic() - started > IDLE_S)
    )
    await asyncio.wait_for(connected(received), timeout=10)
    async with stream_redis(gateway) as (redis, key):
        for price in ("0.50", "0.50", "0.50", "0.40", "0.40"):
            await redis.xadd(key, {"data": quote(gpu, price)})
            await asyncio.sleep(1)
        await asyncio.wait_for(reader, timeout=IDLE_S + HEARTBEAT_S * 2)
    assert not received.ended  # the stream was still open when the client left
    assert received.retries == [RETRY_MS]
    assert received.pings >= IDLE_S // HEARTBEAT_S - 1
    prices = [data["best"]["price"] for _, data in received.of(gpu)]
    assert prices == ["0.50", "0.40"]  # one event per change, never a repeat


async def test_a_reconnect_resumes_after_the_last_event_on_an_idle_market(
    gateway: RunningGateway,
) -> None:
    gpu = new_gpu()
    async with stream_redis(gateway) as (redis, key):
        first = Received()
        reader = asyncio.create_task(read_stream(gateway, first, until=lambda r: r.of(gpu)))
        await asyncio.wait_for(connected(first), timeout=10)
        await redis.xadd(key, {"data": quote(gpu, "0.50")})
        await asyncio.wait_for(reader, timeout=10)
        [(last_id, _)] = first.of(gpu)

        # Disconnected: the same quote again (not a change), then a change.
        await redis.xadd(key, {"data": quote(gpu, "0.50")})
        changed = str(await redis.xadd(key, {"data": quote(gpu, "0.45")}))
        again = Received()
        await asyncio.wait_for(
            read_stream(gateway, again, last_event_id=last_id, until=lambda r: r.of(gpu)),
            timeout=10,
        )
    assert [(i, d["best"]["price"]) for i, d in again.of(gpu)] == [(changed, "0.45")]


async def test_a_reconnect_resumes_without_gap_or_repeat_on_a_busy_market(
    gateway: RunningGateway,
) -> None:
    gpus = [new_gpu() for _ in range(3)]
    total = 300
    async with stream_redis(gateway) as (redis, key):
        appended: list[str] = []

        async def busy() -> None:
            for n in range(total):
                price = f"{1 + n / 1000:.3f}"  # each quote a change of its book
                appended.append(str(await redis.xadd(key, {"data": quote(gpus[n % 3], price)})))
                await asyncio.sleep(0.005)

        def mine(received: Received) -> list[str]:
            return [i for i, d in received.events if d.get("gpu") in gpus]

        first = Received()
        reader = asyncio.create_task(
            read_stream(gateway, first, until=lambda r: len(mine(r)) >= total // 3)
        )
        await asyncio.wait_for(connected(first), timeout=10)
        writer = asyncio.create_task(busy())
        await asyncio.wait_for(reader, timeout=30)
        second = Received()
        await asyncio.wait_for(
            read_stream(
                gateway,
                second,
                last_event_id=mine(first)[-1],
                until=lambda r: len(mine(first)) + len(mine(r)) >= total,
            ),
            timeout=30,
        )
        await writer
    assert mine(first) + mine(second) == appended
