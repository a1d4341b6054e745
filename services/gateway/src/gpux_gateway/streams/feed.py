"""One reader of the price stream per gateway process, fanned out to every client listening.

Each open stream reading Redis on its own would hold a pooled connection in ``XREAD BLOCK``
for as long as it is open: the process's pool (``gpux_platform.cache.MAX_CONNECTIONS``)
would be gone at 128 streams, starving rate limits and market data reads. So one task reads,
and only while at least one client listens: the first client starts it, the last to leave
cancels it (so a stopping gateway, whose streams end, stops it too); each entry goes to every
client's queue.

- A queue holds at most ``QUEUE_SIZE`` updates: a client that falls this far behind is
  dropped (logged), its stream ends after what it was sent, and its reconnect with
  ``Last-Event-ID`` resumes it. Memory never grows with a slow reader.
- A client joins at the feed's position (``position``): the last entry passed on and what
  each book said up to it; what comes after is in its queue. A client that resumes reads what
  it missed first (``entries_after``, short reads on the shared pool, a few at a time) and
  skips the queued entries at or before the last one it sent: ids are ordered, so there is
  neither a gap nor a repeat.
- A read that fails is logged and tried again from the same entry; clients keep their
  connection (and their heartbeats) meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NamedTuple, ParamSpec, TypeVar

from redis.exceptions import RedisError

from gpux_gateway.streams.changes import Changes, Said, said
from gpux_gateway.streams.repository import Entry, PriceSource
from gpux_platform.cache import READ_TIMEOUT_S

log = logging.getLogger("gpux.gateway.streams")

BLOCK_MS = min(15_000, int(READ_TIMEOUT_S * 1000) // 2)
"""How long one read of the stream waits for an update (at most half the reply timeout)."""
QUEUE_SIZE = 1_000
"""Updates a client may have waiting before it is dropped as too slow."""
REDIS_RETRY_S = 1.0
"""How long a read waits before it is tried again after a Redis error."""
RESUME_SCAN = 1_000
"""How many entries up to a position are read to know what each book last said."""
READS_AT_ONCE = 4
"""Clients' history reads (on resume) one process runs at a time: a burst of reconnects
holds a few pooled connections, never the pool."""

P = ParamSpec("P")
T = TypeVar("T")


class Update(NamedTuple):
    """One entry of the stream as the feed passes it on: read and parsed once per process."""

    entry_id: str
    data: str
    said: Said


class Position(NamedTuple):
    """Where a client joins the feed: the last entry passed on, and what each book said."""

    cursor: str
    changes: Changes


class Listener:
    """One client's updates, in order, at most ``size`` waiting; ended by the feed when the
    client is too slow or the gateway stops."""

    def __init__(self, size: int) -> None:
        self._queue: asyncio.Queue[Update | None] = asyncio.Queue()
        self._size = size
        self.dropped = False
        """Whether the feed let this client go for falling ``size`` updates behind."""

    def offer(self, update: Update) -> bool:
        """Queue ``update``; False when ``size`` are already waiting."""
        if self._queue.qsize() >= self._size:
            return False
        self._queue.put_nowait(update)
        return True

    def end(self) -> None:
        """No update after those already queued."""
        self._queue.put_nowait(None)

    async def updates(self) -> AsyncIterator[Update]:
        """The queued updates, waiting for the next, until the feed ends this listener."""
        while (update := await self._queue.get()) is not None:
            yield update


class PriceFeed:
    """The process's one reader of the price stream and the clients it feeds."""

    def __init__(
        self,
        source: PriceSource,
        *,
        queue_size: int = QUEUE_SIZE,
        block_ms: int = BLOCK_MS,
        retry_s: float = REDIS_RETRY_S,
    ) -> None:
        self._source = source
        self._queue_size = queue_size
        self._block_ms = block_ms
        self._retry_s = retry_s
        self._listeners: set[Listener] = set()
        self._live = asyncio.Event()
        self._cursor = "0-0"
        self._changes = Changes()
        self._following: asyncio.Task[None] | None = None
        self._cancelled: set[asyncio.Task[None]] = set()  # kept until they are done
        self._reads = asyncio.Semaphore(READS_AT_ONCE)

    @property
    def listeners(self) -> int:
        """How many clients listen now."""
        return len(self._listeners)

    @property
    def reading(self) -> bool:
        """Whether the feed follows the stream now (or a read it cancelled has yet to end)."""
        return self._following is not None or bool(self._cancelled)

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[Listener]:
        """A listener of every update from now on, for the ``with`` block's time."""
        listener = Listener(self._queue_size)
        self._listeners.add(listener)
        if self._following is None:
            # A context of its own: it outlives the request that started it, whose id its
            # log lines must not carry.
            self._following = asyncio.create_task(
                self._follow(), name="price feed", context=contextvars.Context()
            )
        try:
            yield listener
        finally:
            self._leave(listener)

    async def position(self) -> Position:
        """Where a listener joins: once the feed follows the stream (its queue holds what
        comes after)."""
        await self._live.wait()
        return Position(self._cursor, self._changes.copy())

    async def entries_up_to(self, end: str) -> list[Entry]:
        """The ``RESUME_SCAN`` entries up to ``end`` (newest first), or none while Redis
        cannot answer."""
        try:
            async with self._reads:
                return await self._source.price_entries_up_to(end, RESUME_SCAN)
        except (RedisError, OSError) as exc:
            log.warning("price stream history unread", extra={"error": repr(exc)})
            return []

    async def entries_after(self, start: str, count: int) -> list[Entry]:
        """Up to ``count`` entries after ``start``, oldest first (retried until Redis answers)."""
        async with self._reads:
            return await self.reliably(self._source.price_entries_after, start, count)

    async def reliably(self, read: Callable[P, Awaitable[T]], *args: P.args, **kw: P.kwargs) -> T:
        """``read``'s answer; a failure is logged and the read tried again after ``retry_s``."""
        while True:
            try:
                return await read(*args, **kw)
            except (RedisError, OSError) as exc:
                log.warning("price stream read failed; retrying", extra={"error": repr(exc)})
            except Exception:
                log.exception("price stream read failed; retrying")
            await asyncio.sleep(self._retry_s)

    async def _follow(self) -> None:
        """From the newest entry on, pass every entry to every listener (cancelled when the
        last one leaves)."""
        newest = await self.reliably(self._source.price_entries_up_to, "$", RESUME_SCAN)
        self._changes = Changes(data for _, data in reversed(newest))
        self._cursor = newest[0][0] if newest else "0-0"
        self._live.set()
        while True:
            entries = await self.reliably(self._source.read_prices, self._cursor, self._block_ms)
            for entry_id, data in entries:
                self._pass_on(Update(entry_id, data, said(data)))

    def _pass_on(self, update: Update) -> None:
        self._cursor = update.entry_id
        self._changes.changes(update.said)
        for listener in [n for n in self._listeners if not n.offer(update)]:
            self._listeners.discard(listener)
            listener.dropped = True
            listener.end()
            log.warning(
                "price stream client too slow; dropped (it resumes with Last-Event-ID)",
                extra={"queued": self._queue_size, "entry_id": update.entry_id},
            )

    def _leave(self, listener: Listener) -> None:
        self._listeners.discard(listener)
        if self._listeners or self._following is None:
            return
        # Nobody listens: stop reading (a blocked read's connection is closed at once; the
        # pool opens another when a client comes).
        self._live.clear()
        following, self._following = self._following, None
        following.cancel()
        self._cancelled.add(following)
        following.add_done_callback(self._cancelled.discard)
