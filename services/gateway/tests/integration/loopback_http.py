"""The tests' own HTTP/1.1 servers on 127.0.0.1: reading one request off a connection, and
serving on a free port."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
"""What a server does with each connection."""


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    """The next request on the connection: its request line, its headers (names in lower
    case) and its body (``Content-Length`` bytes)."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {
        k.strip().lower(): v.strip()
        for k, _, v in (line.partition(":") for line in head[1:] if ":" in line)
    }
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return head[0], headers, body


@contextlib.asynccontextmanager
async def loopback(serve: Serve) -> AsyncIterator[int]:
    """Serve connections with ``serve`` on 127.0.0.1 while open; yields the port."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port: int = server.sockets[0].getsockname()[1]
    async with server:
        yield port
