"""Route /v1/stream/prices: best-ask updates as server-sent events."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from sse_starlette.sse import EventSourceResponse

from gpux_gateway.entrypoints.dependencies import AnonymousLimit
from gpux_gateway.entrypoints.sse import LastEventId, event_stream
from gpux_gateway.streams import service
from gpux_gateway.streams.feed import PriceFeed

router = APIRouter(prefix="/v1/stream", tags=["market data"])


async def price_feed(request: Request) -> PriceFeed:
    """The process's one reader of the price stream (``app.state.price_feed``)."""
    feed: PriceFeed = request.app.state.price_feed
    return feed


@router.get(
    "/prices",
    summary="Best-ask updates as server-sent events (`event: best_ask`)",
    dependencies=[AnonymousLimit],
    response_class=EventSourceResponse,
    description=service.DESCRIPTION,
)
async def stream_prices(
    feed: Annotated[PriceFeed, Depends(price_feed)],
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    start = service.start_after(last_event_id)
    return event_stream(service.best_ask_events(feed, start), service.HEARTBEAT_S)
