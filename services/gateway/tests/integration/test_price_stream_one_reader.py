"""The price stream reads Redis once per gateway process, against real Redis: 200 open
streams hold one blocked read between them, the other Redis uses of the process keep working
meanwhile, every stream gets the update, and the read stops when the streams end (the last
client leaving, or the gateway stopping).

Connections are counted on the server (``CLIENT LIST``), restricted to this process's own
sockets to Redis (the gateways under test run in this process); other processes share the
server.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from pydantic import SecretStr

from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC
from gpux_gateway.config import GatewaySettings
from gpux_platform.settings import GpuxSettings

from .conftest import ADMIN_KEY, RunningGateway
from .test_price_stream import Received, connected, new_gpu, quote, read_stream, stream_redis

STREAMS = 200


def own_ports(redis_port: int) -> set[int]:
    """The local ports of this process's TCP connections to ``redis_port``."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == redis_port:
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


async def blocked_reads(gateway: RunningGateway) -> int:
    """How many of this process's Redis connections wait in a blocking command now."""
    port = urlsplit(gateway.settings.redis_url).port or 6379
    async with stream_redis(gateway) as (redis, _):
        clients = await redis.client_list()
    ours = own_ports(port)
    return sum(
        1
        for client in clients
        if int(client["addr"].rsplit(":", 1)[1]) in ours and "b" in client["flags"]
    )


async def test_two_hundred_streams_share_one_read_and_leave_redis_to_the_rest(
    gateway: RunningGateway,
) -> None:
    gpu = new_gpu()
    clients = [Received() for _ in range(STREAMS)]
    readers = [
        asyncio.create_task(read_stream(gateway, received, until=lambda r: r.of(gpu)))
        for received in clients
    ]
    for received in clients:
        await asyncio.wait_for(connected(received), timeout=30)
    held = await eventually(lambda: blocked_reads(gateway), lambda n: n >= 1)
    assert held <= 2  # was one per stream, up to the pool's 128

    # Meanwhile the process's other Redis uses answer: the rate limit and market data.
    async with gateway.client() as client:
        for _ in range(20):
            response = await client.get("/v1/prices")
            assert response.status_code == 200, response.text
            assert "RateLimit-Remaining" in response.headers

    async with stream_redis(gateway) as (redis, key):
        n = 0
        while not all(received.of(gpu) for received in clients):
            n += 1  # each a change, until every stream has listened long enough to get one
            await redis.xadd(key, {"data": quote(gpu, f"{n / 100:.2f}")})
            await asyncio.sleep(0.2)
    await asyncio.wait_for(asyncio.gather(*readers), timeout=30)
    assert all(not received.ended for received in clients)
    await eventually(lambda: blocked_reads(gateway), lambda n: n == 0)  # nobody listens


async def test_a_stopping_gateway_ends_its_streams_and_its_read(
    gpux_settings: GpuxSettings,
) -> None:
    clients = [Received() for _ in range(3)]
    async with running(
        SPEC, gpux_settings, admin_key=SecretStr(ADMIN_KEY), anonymous_rate_limit="10000/minute"
    ) as (url, settings):
        assert isinstance(settings, GatewaySettings)
        gateway = RunningGateway(url, settings)
        readers = [asyncio.create_task(read_stream(gateway, r)) for r in clients]
        for received in clients:
            await asyncio.wait_for(connected(received), timeout=30)
        await eventually(lambda: blocked_reads(gateway), lambda n: n == 1)
    ends = await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), timeout=30)
    # Ended by the server: closed (sse-starlette cuts streams at shutdown), not timed out.
    assert all(
        received.ended or isinstance(end, httpx.RemoteProtocolError)
        for received, end in zip(clients, ends, strict=True)
    ), ends
    assert await blocked_reads(gateway) == 0
