"""The webhook sender against a real local HTTP server: a connection of its own per POST
(none kept alive for another host of the same address), each checked address tried in turn
while connecting fails, and a resolution that hangs failing the check within its timeout."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from gpux_gateway.adapters.webhook_sender import (
    LIMITS,
    RESOLVE_TIMED_OUT,
    HttpWebhooks,
    Resolver,
    WebhookTargets,
)

from .loopback_http import loopback, read_request

pytestmark = pytest.mark.integration


@dataclass
class KeepAliveServer:
    """An HTTP/1.1 server on 127.0.0.1 that keeps each connection open for more requests
    (unless asked to close it), and counts connections and the Host of each request."""

    connections: int = 0
    hosts: list[str] = field(default_factory=list)
    port: int = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                _, headers, _ = await read_request(reader)
                self.hosts.append(headers["host"])
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")  # no body: reusable at once
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        writer.close()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[KeepAliveServer]:
        async with loopback(self._serve) as self.port:
            yield self


def resolving_to(*addresses: str) -> Resolver:
    async def resolver(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolver


@contextlib.asynccontextmanager
async def sender(resolver: Resolver) -> AsyncIterator[HttpWebhooks]:
    webhooks = HttpWebhooks(WebhookTargets(allow_private=True, resolver=resolver), timeout_s=5)
    try:
        yield webhooks
    finally:
        await webhooks.aclose()


async def test_two_hosts_of_one_address_never_share_a_connection() -> None:
    # The sender reads no response body (a connection left unread is not reused anyway);
    # keep-alive is off too, so one read in the future still could not share a connection.
    assert LIMITS.max_keepalive_connections == 0
    async with (
        KeepAliveServer().serving() as server,
        sender(resolving_to("127.0.0.1")) as webhooks,
    ):
        first = await webhooks.send(f"http://a.example:{server.port}/hook", b"{}", {})
        second = await webhooks.send(f"http://b.example:{server.port}/hook", b"{}", {})
    assert (first.status, second.status) == (204, 204)
    assert server.hosts == [f"a.example:{server.port}", f"b.example:{server.port}"]
    assert server.connections == 2


async def test_each_checked_address_is_tried_while_connecting_fails() -> None:
    # Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1): refused.
    async with (
        KeepAliveServer().serving() as server,
        sender(resolving_to("127.0.0.2", "127.0.0.1")) as webhooks,
    ):
        sent = await webhooks.send(f"http://hooks.example:{server.port}/hook", b"{}", {})
    assert (sent.status, sent.error) == (204, None)
    assert server.hosts == [f"hooks.example:{server.port}"]


async def test_no_address_answering_fails_the_attempt() -> None:
    async with (
        KeepAliveServer().serving() as server,
        sender(resolving_to("127.0.0.2", "127.0.0.3")) as webhooks,
    ):
        sent = await webhooks.send(f"http://hooks.example:{server.port}/hook", b"{}", {})
    assert (sent.status, sent.error) == (None, "connection failed: ConnectError")
    assert server.connections == 0


async def test_every_address_must_pass_the_check() -> None:
    targets = WebhookTargets(allow_private=False, resolver=resolving_to("8.8.8.8", "10.0.0.1"))
    assert await targets.refusal("https://hooks.example/hook") == "blocked address"


async def test_a_resolution_that_hangs_fails_the_check_and_the_attempt() -> None:
    async def hanging(host: str, port: int) -> list[str]:
        await asyncio.Event().wait()
        return []

    targets = WebhookTargets(allow_private=True, resolver=hanging, resolve_timeout_s=0.05)
    assert await targets.refusal("https://hooks.example/hook") == RESOLVE_TIMED_OUT
    webhooks = HttpWebhooks(targets, timeout_s=5)
    try:
        sent = await webhooks.send("https://hooks.example/hook", b"{}", {})
    finally:
        await webhooks.aclose()
    assert (sent.status, sent.error) == (None, RESOLVE_TIMED_OUT)
