"""A webhook receiver for tests: a tiny HTTP/1.1 server on 127.0.0.1 that keeps every request
it gets and answers each with the status its script gives (200 once the script runs out).

It reads what the gateway's dispatcher sends (one request per connection or keep-alive, a
``Content-Length`` body) and nothing more: enough to play a seller's or an integrator's
endpoint without a web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Received:
    """One request the receiver got."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes


@dataclass
class Receiver:
    """The server's state: what it got, and the statuses it still has to answer."""

    statuses: list[int] = field(default_factory=list)
    """Answered in turn, one per request; 200 once they ran out."""
    received: list[Received] = field(default_factory=list)
    port: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    """Set at each request (cleared by ``next``)."""

    @property
    def url(self) -> str:
        """Where to point an endpoint (its path is ``/hook``)."""
        return f"http://127.0.0.1:{self.port}/hook"

    async def next(self, count: int, timeout_s: float = 30) -> list[Received]:
        """Wait until ``count`` requests in all have arrived; those requests."""
        async with asyncio.timeout(timeout_s):
            while len(self.received) < count:
                self.arrived.clear()
                await self.arrived.wait()
        return self.received[:count]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while request := await _read(reader):
                self.received.append(request)
                self.arrived.set()
                status = self.statuses.pop(0) if self.statuses else 200
                writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _read(reader: asyncio.StreamReader) -> Received | None:
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Received(method, path, headers, body)


@contextlib.asynccontextmanager
async def receiving(statuses: list[int] | None = None) -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port until the block ends."""
    receiver = Receiver(statuses=list(statuses or []))
    server = await asyncio.start_server(receiver._serve, "127.0.0.1", 0)
    receiver.port = server.sockets[0].getsockname()[1]
    try:
        yield receiver
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)
