"""Best-ask updates as server-sent events, resumable with Last-Event-ID.

Pricing appends best-ask updates to a Redis stream; each SSE event's id is the stream entry
id, so a client that reconnects with ``Last-Event-ID`` gets exactly what it missed (within
the stream's length).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from gpux_gateway.market.repository import MarketDataRepository

_ENTRY_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
BLOCK_MS = 15_000
"""How long one read of the stream waits for an update."""


def start_after(last_event_id: str | None) -> str:
    """Where a stream starts: after the entry the client saw last, or from now (``$``)."""
    return last_event_id if last_event_id and _ENTRY_ID.match(last_event_id) else "$"


async def best_ask_events(
    market_data: MarketDataRepository, start: str, block_ms: int = BLOCK_MS
) -> AsyncIterator[dict[str, Any]]:
    """The SSE events of the price stream from ``start`` on, forever."""
    async for entry_id, data in market_data.price_updates(start, block_ms):
        yield {"id": entry_id, "event": "best_ask", "data": data}
