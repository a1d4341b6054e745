"""Route /v1/stream/events: the caller's account events as server-sent events."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from sse_starlette.sse import EventSourceResponse

from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import PrincipalDep
from gpux_gateway.entrypoints.schemas import problem_responses
from gpux_gateway.entrypoints.sse import LastEventId, event_stream
from gpux_gateway.notifications import service
from gpux_gateway.notifications.feed import AccountEventsFeed
from gpux_gateway.service.access import account_id_for

router = APIRouter(prefix="/v1/stream", tags=["notifications"])


async def account_events_feed(request: Request) -> AccountEventsFeed:
    """The process's one follower of the account events (``app.state.account_events``)."""
    feed: AccountEventsFeed = request.app.state.account_events
    return feed


@router.get(
    "/events",
    summary="The account's own events as server-sent events (`event: <type>`)",
    response_class=EventSourceResponse,
    description=service.DESCRIPTION,
    responses=problem_responses((400, "The cursor is not `<txid>.<seq>`")),
)
async def stream_account_events(
    who: PrincipalDep,
    feed: Annotated[AccountEventsFeed, Depends(account_events_feed)],
    last_event_id: LastEventId = None,
    after: Annotated[
        str | None, Query(max_length=45, description="A cursor: the last `id` seen.")
    ] = None,
    from_: Annotated[
        Literal["now", "start"],
        Query(alias="from", description="Without a cursor: from `now` or the first event kept."),
    ] = "now",
) -> EventSourceResponse:
    account_id = account_id_for(who, Scope.READ)
    start = service.start_at(last_event_id, after, from_ == "start")
    return event_stream(service.account_events(feed, account_id, start), service.HEARTBEAT_S)
