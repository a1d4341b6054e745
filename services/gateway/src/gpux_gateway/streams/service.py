"""Best-ask updates as server-sent events: heartbeats, resumable with Last-Event-ID, changes only.

Pricing appends best-ask updates to a Redis stream; each SSE event's id is the stream entry
id, so a client that reconnects with ``Last-Event-ID`` gets exactly what it missed (within
the stream's length, ``PRICES_STREAM_MAX`` entries). The process reads the stream once for
all its clients (``streams.feed.PriceFeed``); a client resuming reads what it missed first.

How the timeouts fit, from Redis to the client:

- one ``XREAD BLOCK`` waits at most ``BLOCK_MS``, well inside the Redis client's reply
  timeout (``gpux_platform.cache.READ_TIMEOUT_S``), so a quiet market never times the
  socket out;
- a comment line (``: ping``) goes out every ``HEARTBEAT_S`` whatever Redis does, so proxies
  and clients see a live connection;
- the stream opens with ``retry: RETRY_MS``: a client that saw nothing for
  ``CLIENT_SILENCE_S`` should drop the connection and reconnect after that delay with the
  last id it saw;
- a Redis error does not end the stream: it is logged and the read retried from the same
  entry, heartbeats going on meanwhile;
- a client too slow for the feed (``QUEUE_SIZE`` updates behind) is sent what it had queued
  and its stream ends: it reconnects and resumes.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from gpux_gateway.streams.changes import Changes, is_after
from gpux_gateway.streams.feed import PriceFeed
from gpux_gateway.streams.repository import Entry
from gpux_platform.redis_keys import PRICES_STREAM_MAX

_ENTRY_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
HEARTBEAT_S = 15
"""How often a comment line keeps an idle stream's connection alive."""
RETRY_MS = 3_000
"""How long a client waits before reconnecting (the ``retry:`` field)."""
CLIENT_SILENCE_S = 3 * HEARTBEAT_S
"""After this long without a byte, a client should take the connection as dead."""
MISSED_PAGE = 1_000
"""How many missed entries one read takes when a client resumes."""

DESCRIPTION = (
    "Each `best_ask` event carries one book's quote (`gpu`, `tier`, `region`, `best`, `depth`,"
    " `as_of`; the best ask's `seller_reliability`, each level's `reliability` and"
    " `min_reliability`) and is sent only when that quote changed; its `id` is the stream"
    " position."
    f" A comment line (`: ping`) is sent every {HEARTBEAT_S} s; the stream opens with"
    f" `retry: {RETRY_MS}`. A client that hears nothing for {CLIENT_SILENCE_S} s should"
    " reconnect after that delay with the `Last-Event-ID` header set to the last id it saw:"
    f" the stream resumes after it (within its last {PRICES_STREAM_MAX:,} entries)."
    " Without the header, or with an id of another form, it starts from now."
)
"""The stream's contract as the OpenAPI document states it."""


def start_after(last_event_id: str | None) -> str:
    """Where a stream starts: after the entry the client saw last, or from now (``$``)."""
    return last_event_id if last_event_id and _ENTRY_ID.match(last_event_id) else "$"


async def best_ask_events(feed: PriceFeed, start: str) -> AsyncIterator[dict[str, Any]]:
    """The SSE events of the price stream from ``start`` on, until the feed lets the client
    go: first the ``retry:`` field, then each entry that changes its book's quote."""
    yield {"comment": "price stream", "retry": RETRY_MS}
    async with feed.listen() as listener:
        cursor, changes = await feed.position()
        if start != "$":
            earlier = await feed.entries_up_to(start)
            cursor, changes = start, Changes(data for _, data in reversed(earlier))
            async for entry_id, data in _missed(feed, start):
                cursor = entry_id
                if changes.is_new(data):
                    yield _event(entry_id, data)
        async for update in listener.updates():
            if not is_after(update.entry_id, cursor):
                continue  # read already, with what it missed
            cursor = update.entry_id
            if changes.changes(update.said):
                yield _event(update.entry_id, update.data)


async def _missed(feed: PriceFeed, start: str) -> AsyncIterator[Entry]:
    """The entries after ``start``, up to about the newest, in short reads."""
    cursor = start
    while True:
        page = await feed.entries_after(cursor, MISSED_PAGE)
        for entry in page:
            yield entry
        if len(page) < MISSED_PAGE:
            return
        cursor = page[-1][0]


def _event(entry_id: str, data: str) -> dict[str, Any]:
    return {"id": entry_id, "event": "best_ask", "data": data}
