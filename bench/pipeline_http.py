"""A small HTTP/1.1 keep-alive client and SSE reader on asyncio, for the pipeline benchmark.

The load generator must not measure itself: httpx tops out near 200 requests/s on the
benchmark's 2-core box, and aiohttp is not a dependency of the workspace. This client does
only what the benchmark needs, with little Python per request: a pool of keep-alive
connections to one loopback host, requests written as one buffer, responses parsed from a
protocol's buffer (Content-Length or chunked bodies), and no redirects, cookies or TLS.
``sse`` reads a server-sent-events stream (chunked) event by event.

It refuses any host but 127.0.0.1: the benchmark only ever drives this machine.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
IDLE_KEEP_S = 4.0  # uvicorn closes a keep-alive connection after 5 s idle
_HEAD_END = b"\r\n\r\n"


class HttpError(Exception):
    """A request that got no complete response (connection refused, closed or timed out)."""


@dataclass(frozen=True, slots=True)
class Response:
    """One response: status, headers (lower-case names) and the whole body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


def loopback_address(base_url: str) -> tuple[str, int]:
    """Host and port of ``base_url``; anything but http on 127.0.0.1 is refused."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.hostname != LOOPBACK or parts.port is None:
        raise ValueError(f"only http://127.0.0.1:<port> is driven, not {base_url!r}")
    return LOOPBACK, parts.port


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _chunked_body(buffer: bytearray, start: int) -> tuple[bytes, int] | None:
    """The de-chunked body from ``start`` and where it ends, or None while incomplete."""
    body = bytearray()
    at = start
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return None
        size = int(bytes(buffer[at:line_end]).split(b";", 1)[0], 16)
        chunk_start = line_end + 2
        if size == 0:
            trailer_end = buffer.find(_HEAD_END, line_end)
            if trailer_end >= 0:
                return bytes(body), trailer_end + 4
            if buffer[chunk_start : chunk_start + 2] == b"\r\n":
                return bytes(body), chunk_start + 2
            return None
        if len(buffer) < chunk_start + size + 2:
            return None
        body += buffer[chunk_start : chunk_start + size]
        at = chunk_start + size + 2


def parse_response(buffer: bytearray, *, head_only: bool = False) -> tuple[Response, int] | None:
    """A complete response at the start of ``buffer`` and its length, or None (need more)."""
    end = buffer.find(_HEAD_END)
    if end < 0:
        return None
    status, headers = _parse_head(bytes(buffer[:end]))
    start = end + 4
    if head_only or status in (204, 304) or 100 <= status < 200:
        return Response(status, headers, b""), start
    if "content-length" in headers:
        stop = start + int(headers["content-length"])
        if len(buffer) < stop:
            return None
        return Response(status, headers, bytes(buffer[start:stop])), stop
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parsed = _chunked_body(buffer, start)
        if parsed is None:
            return None
        return Response(status, headers, parsed[0]), parsed[1]
    raise HttpError("a response without Content-Length or chunked body is not supported")


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Response] | None = None
        self.closed = False
        self.keep = True
        self.idle_since = time.monotonic()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        try:
            parsed = parse_response(self.buffer)
        except (HttpError, ValueError, IndexError) as exc:
            waiter.set_exception(HttpError(f"bad response: {exc}"))
            self.close()
            return
        if parsed is None:
            return
        response, used = parsed
        del self.buffer[:used]
        self.keep = response.headers.get("connection", "").lower() != "close"
        waiter.set_result(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(HttpError(f"connection closed ({exc or 'by the server'})"))

    def send(self, data: bytes) -> asyncio.Future[Response]:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class HttpClient:
    """Requests to one loopback ``http://127.0.0.1:<port>`` over a pool of connections."""

    def __init__(
        self, base_url: str, *, max_connections: int = 64, timeout_s: float = 30.0
    ) -> None:
        self.host, self.port = loopback_address(base_url)
        self.timeout_s = timeout_s
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(max_connections)
        self._open: set[_Connection] = set()
        self._host_header = f"{self.host}:{self.port}"

    async def _connection(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and now - conn.idle_since < IDLE_KEEP_S:
                return conn
            conn.close()
            self._open.discard(conn)
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Connection, self.host, self.port)
        self._open.add(conn)
        return conn

    def _encode(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str] | None
    ) -> bytes:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self._host_header}"]
        if headers:
            lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body is not None else head

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """Send one request and wait for its whole response (HttpError if none came)."""
        if json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode()
        data = self._encode(method, path, body, headers)
        async with self._slots:
            try:
                conn = await self._connection()
            except OSError as exc:
                raise HttpError(f"cannot connect to {self._host_header} ({exc})") from None
            try:
                async with asyncio.timeout(self.timeout_s):
                    response = await conn.send(data)
            except TimeoutError:
                conn.close()
                self._open.discard(conn)
                raise HttpError(f"no response within {self.timeout_s} s") from None
            except HttpError:
                self._open.discard(conn)
                raise
            if conn.keep and not conn.closed:
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                conn.close()
                self._open.discard(conn)
            return response

    async def close(self) -> None:
        """Close every connection."""
        for conn in list(self._open):
            conn.close()
        self._open.clear()
        self._idle.clear()


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event and when it arrived (``time.monotonic``)."""

    id: str | None
    event: str
    data: str
    received: float


def _sse_lines(text: str, pending: dict[str, str]) -> list[tuple[str, str, str]]:
    """Complete events (id, event, data) from ``text``; ``pending`` keeps a partial one."""
    done: list[tuple[str, str, str]] = []
    for raw in text.split("\n")[:-1]:  # ``text`` ends with a newline
        line = raw.rstrip("\r")
        if not line:
            if "data" in pending:
                done.append(
                    (pending.get("id", ""), pending.get("event", "message"), pending["data"])
                )
            pending.clear()
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data" and "data" in pending:
            pending["data"] += "\n" + value
        else:
            pending[name] = value
    return done


async def sse(
    base_url: str, path: str, headers: Mapping[str, str] | None = None
) -> AsyncIterator[SseEvent]:
    """The events of one SSE stream (chunked), until the server closes it or the caller stops."""
    host, port = loopback_address(base_url)
    reader, writer = await asyncio.open_connection(host, port)
    try:
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
            f"{extra}\r\n".encode("latin-1")
        )
        head = await reader.readuntil(_HEAD_END)
        status, response_headers = _parse_head(head[:-4])
        if status != 200:
            raise HttpError(f"GET {path}: {status}")
        chunked = response_headers.get("transfer-encoding", "").lower() == "chunked"
        pending: dict[str, str] = {}
        text = ""
        while True:
            if chunked:
                size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
                if size == 0:
                    return
                data = await reader.readexactly(size + 2)
                text += data[:-2].decode()
            else:
                data = await reader.read(65536)
                if not data:
                    return
                text += data.decode()
            cut = text.rfind("\n")
            if cut < 0:
                continue
            complete, text = text[: cut + 1], text[cut + 1 :]
            now = time.monotonic()
            for event_id, event, payload in _sse_lines(complete, pending):
                yield SseEvent(event_id or None, event, payload, now)
    finally:
        writer.close()
