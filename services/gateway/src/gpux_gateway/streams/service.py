"""Best-ask updates as server-sent events: heartbeats, resumable with Last-Event-ID, changes only.

Pricing appends best-ask updates to a Redis stream; each SSE event's id is the stream entry
id, so a client that reconnects with ``Last-Event-ID`` gets exactly what it missed (within
the stream's length, ``PRICES_STREAM_MAX`` entries).

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
  entry, heartbeats going on meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any

from redis.exceptions import RedisError

from gpux_gateway.market.repository import MarketDataRepository
from gpux_platform.cache import READ_TIMEOUT_S
from gpux_platform.redis_keys import PRICES_STREAM_MAX

log = logging.getLogger("gpux.gateway.streams")

_ENTRY_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
BLOCK_MS = min(15_000, int(READ_TIMEOUT_S * 1000) // 2)
"""How long one read of the stream waits for an update (at most half the reply timeout)."""
HEARTBEAT_S = 15
"""How often a comment line keeps an idle stream's connection alive."""
RETRY_MS = 3_000
"""How long a client waits before reconnecting (the ``retry:`` field)."""
CLIENT_SILENCE_S = 3 * HEARTBEAT_S
"""After this long without a byte, a client should take the connection as dead."""
RESUME_SCAN = 1_000
"""How many entries up to a stream's start are read to know what each book last said."""
REDIS_RETRY_S = 1.0
"""How long the stream waits before reading again after a Redis error."""

DESCRIPTION = (
    "Each `best_ask` event carries one book's quote (`gpu`, `tier`, `region`, `best`, `depth`,"
    " `as_of`) and is sent only when that quote changed; its `id` is the stream position."
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


def _state(data: str) -> tuple[str, str]:
    """A quote's book key (``gpu|tier|region``) and what it says, whatever its time."""
    try:
        body = json.loads(data)
    except ValueError:
        return data, data
    if not isinstance(body, dict):
        return data, data
    key = "|".join(str(body.get(field)) for field in ("gpu", "tier", "region"))
    said = {k: v for k, v in body.items() if k != "as_of"}
    return key, json.dumps(said, sort_keys=True)


class Changes:
    """What each book last said on the stream; passes an entry only when it says something new."""

    def __init__(self, seen: Iterable[str] = ()) -> None:
        self._said: dict[str, str] = {}
        for data in seen:
            self.is_new(data)

    def is_new(self, data: str) -> bool:
        """Whether this entry changes what its book said (and remember it)."""
        key, said = _state(data)
        if self._said.get(key) == said:
            return False
        self._said[key] = said
        return True


async def best_ask_events(
    market_data: MarketDataRepository, start: str, block_ms: int = BLOCK_MS
) -> AsyncIterator[dict[str, Any]]:
    """The SSE events of the price stream from ``start`` on, forever: first the ``retry:``
    field, then each entry that changes its book's quote."""
    yield {"comment": "price stream", "retry": RETRY_MS}
    earlier = await _up_to(market_data, start)
    changes = Changes(data for _, data in reversed(earlier))
    # From now: after the newest entry, so what is added between reads is not skipped.
    cursor = earlier[0][0] if start == "$" and earlier else start
    while True:
        try:
            async for entry_id, data in market_data.price_updates(cursor, block_ms):
                cursor = entry_id
                if changes.is_new(data):
                    yield {"id": entry_id, "event": "best_ask", "data": data}
        except (RedisError, OSError) as exc:
            log.warning("price stream read failed; retrying", extra={"error": repr(exc)})
            await asyncio.sleep(REDIS_RETRY_S)


async def _up_to(market_data: MarketDataRepository, start: str) -> list[tuple[str, str]]:
    """The entries up to ``start`` (newest first), or none while Redis cannot answer."""
    try:
        return await market_data.price_entries_up_to(start, RESUME_SCAN)
    except (RedisError, OSError) as exc:
        log.warning("price stream history unread", extra={"error": repr(exc)})
        return []
