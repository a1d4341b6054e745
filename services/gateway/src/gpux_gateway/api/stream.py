"""Live market data as server-sent events, resumable with Last-Event-ID.

Best-ask updates are appended to a Redis stream (by the pricing side); each SSE
event's id is the stream entry id, so a client that reconnects with
``Last-Event-ID`` gets exactly what it missed (within the stream's length).
"""

import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header
from sse_starlette.sse import EventSourceResponse

from gpux_gateway.api.auth import anonymous_limit
from gpux_gateway.context import Gateway
from gpux_platform.redis_keys import PRICES_STREAM

_ENTRY_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


def prices_stream_key(gw: Gateway) -> str:
    """The Redis stream that carries best-ask updates."""
    return gw.settings.redis_key(PRICES_STREAM)


def router(gw: Gateway, block_ms: int = 15_000) -> APIRouter:
    """Routes under /v1/stream."""
    api = APIRouter(prefix="/v1/stream", tags=["market data"])

    @api.get(
        "/prices",
        summary="Best-ask updates as server-sent events (`event: best_ask`)",
        dependencies=[Depends(anonymous_limit(gw))],
        response_class=EventSourceResponse,
    )
    async def prices(
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=45)] = None,
    ) -> EventSourceResponse:
        start = last_event_id if last_event_id and _ENTRY_ID.match(last_event_id) else "$"
        return EventSourceResponse(_events(gw, start, block_ms), ping=15)

    return api


async def _events(gw: Gateway, start: str, block_ms: int) -> AsyncIterator[dict[str, Any]]:
    key = prices_stream_key(gw)
    redis: Any = gw.redis  # redis-py's stream replies are loosely typed
    cursor = start
    if cursor == "$":
        # Resolve "now" once, so entries added between reads are not skipped.
        last = await redis.xrevrange(key, count=1)
        cursor = last[0][0].decode() if last else "0-0"
    while True:
        batches = await redis.xread({key: cursor}, block=block_ms, count=100)
        for _, entries in batches:
            for entry_id, fields in entries:
                cursor = entry_id.decode()
                data = fields.get(b"data", b"{}").decode()
                yield {"id": cursor, "event": "best_ask", "data": data}
