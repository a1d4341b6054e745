"""An account's events as server-sent events: what it missed after its cursor, then each new
one as it is recorded.

Each SSE event is ``event: <type>``, ``id: <cursor>`` and ``data:`` the event's public JSON;
a client that reconnects with ``Last-Event-ID`` (or ``?after=``) set to the last ``id`` it saw
gets exactly what came after (within the events' retention). Without a cursor the stream
starts from now, or from the first event kept with ``?from=start``. A comment line goes out
every ``HEARTBEAT_S``; the stream opens with ``retry: RETRY_MS``. A read that fails is logged
and tried again after the poll interval; the client keeps its connection meanwhile.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from gpux_gateway.notifications.cursor import START, Cursor, CursorError, Snapshot
from gpux_gateway.notifications.feed import AccountEventsFeed
from gpux_gateway.notifications.log import Logged
from gpux_platform.problems import ProblemError

log = logging.getLogger("gpux.gateway.notifications")

HEARTBEAT_S = 15
"""How often a comment line keeps an idle stream's connection alive."""
RETRY_MS = 3_000
"""How long a client waits before reconnecting (the ``retry:`` field)."""

DESCRIPTION = (
    "The caller's own account events (see the webhooks for the types): each SSE event is"
    " `event: <type>`, `id: <cursor>` and `data:` the event's JSON (`id`, `type`,"
    " `created_at`, `account_id`, `data`). Reconnect with the `Last-Event-ID` header (or"
    " `?after=`) set to the last `id` seen: the stream resumes right after it. Without a"
    " cursor it starts from now (`?from=start`: from the oldest event kept, 7 days by"
    f" default). A comment line (`: ping`) is sent every {HEARTBEAT_S} s; the stream opens"
    f" with `retry: {RETRY_MS}`. A cursor of another form is a 400 problem (`bad-cursor`)."
)
"""The stream's contract as the OpenAPI document states it."""


def start_at(last_event_id: str | None, after: str | None, from_start: bool) -> Cursor | None:
    """Where a stream starts: after the client's cursor (the header first: a browser's
    ``EventSource`` reconnects with it), before every event, or None (from now)."""
    given = last_event_id or after
    if given:
        try:
            return Cursor.parse(given)
        except CursorError as exc:
            raise ProblemError(400, "bad-cursor", "Bad cursor", str(exc)) from None
    return START if from_start else None


async def account_events(
    feed: AccountEventsFeed, account_id: str, start: Cursor | None
) -> AsyncIterator[dict[str, Any]]:
    """The account's SSE events after ``start`` (None: from now), until the client leaves.

    "Now" is the database's snapshot taken before the first line goes out: a client that
    reads what happened before (the order it follows) once the stream's first line came gets
    every event after that, and none of a transaction that had committed by then (reading
    starts before the oldest transaction running, so those are passed over). Where the last
    rows a read gave were passed over, their cursor goes out as an ``id:`` alone, which moves
    the client's ``Last-Event-ID`` without an event: a reconnect does not send them."""
    before: Snapshot | None = None
    if start is None:
        before = await feed.events.now()
        start = before.cursor
    cursor = start
    yield {"comment": "account events", "retry": RETRY_MS}
    async with feed.listen() as waiter:
        while True:
            page = await _page(feed, account_id, cursor)
            passed_over = False
            for logged in page:
                cursor = logged.cursor
                passed_over = before is not None and before.committed(cursor.txid)
                if not passed_over:
                    yield sse(logged)
            if passed_over:  # an id alone: a client that reconnects resumes after them too
                yield {"id": str(cursor)}
            if len(page) < feed.page:
                await waiter.wait(feed.poll_s)


async def _page(feed: AccountEventsFeed, account_id: str, cursor: Cursor) -> list[Logged]:
    try:
        return await feed.read(account_id, cursor)
    except Exception:  # the database's moment: the stream goes on, read again after a poll
        log.exception("account events unread; reading again")
        return []


def sse(logged: Logged) -> dict[str, Any]:
    """One event as the stream sends it."""
    event = logged.event
    body = json.dumps(event.public(), separators=(",", ":"))
    return {"id": str(logged.cursor), "event": event.type.value, "data": body}
