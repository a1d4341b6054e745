"""The account events' feed and stream on a fake log: one follower for every stream, started
by the first and cancelled with the last; a notification wakes a waiting stream at once (the
poll is an hour here); a stream sends only its account's events, in order, with their cursor
as the SSE id, and goes on after a failed read; "now" is taken before its first line, and a
stream from now sends no event of a transaction that had committed by then."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.notifications.cursor import Cursor, Snapshot
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.feed import AccountEventsFeed
from gpux_gateway.notifications.log import Logged
from gpux_gateway.notifications.service import account_events
from gpux_gateway.notifications.types import AccountEventType

pytestmark = pytest.mark.unit

AT = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = 3600.0


class FakeLog:
    """The account events in memory; ``notify`` wakes the follower as ``pg_notify`` would.
    A row's transaction is ``100 + n`` unless said; rows of ``running`` transactions are not
    readable yet, as in PostgreSQL (reads stop before the oldest transaction running)."""

    def __init__(self) -> None:
        self.rows: list[Logged] = []
        self.running: set[int] = set()
        self.followers = 0
        self.following = False
        self.fail_next = False
        self._wake: Callable[[], None] | None = None

    def add(self, account_id: str, n: int, txid: int | None = None) -> AccountEvent:
        event = AccountEvent.of(f"src{n}", account_id, AccountEventType.ORDER_FILLED, {"n": n}, AT)
        self.rows.append(Logged(Cursor(100 + n if txid is None else txid, n), event))
        return event

    def _xmax(self) -> int:
        return max((r.cursor.txid for r in self.rows), default=99) + 1

    def notify(self) -> None:
        assert self._wake is not None
        self._wake()

    async def after(self, account_id: str, cursor: Cursor, limit: int) -> list[Logged]:
        if self.fail_next:
            self.fail_next = False
            raise OSError("the database went away")
        readable_below = min(self.running, default=self._xmax())
        rows = sorted(
            r
            for r in self.rows
            if r.event.account_id == account_id
            and cursor < r.cursor
            and r.cursor.txid < readable_below
        )
        return rows[:limit]

    async def now(self) -> Snapshot:
        xmax = self._xmax()
        return Snapshot(min(self.running, default=xmax), xmax, frozenset(self.running))

    async def follow(self, wake: Callable[[], None]) -> None:
        self.followers += 1
        self.following, self._wake = True, wake
        try:
            await asyncio.Event().wait()
        finally:
            self.following = False


async def collect(stream: AsyncIterator[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    async for item in stream:
        if "event" in item:
            into.append(item)


async def test_a_notification_wakes_the_stream_which_sends_its_accounts_events() -> None:
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=HOUR)
    first = log.add("alice", 1)
    log.add("bob", 2)
    sent: list[dict[str, Any]] = []
    task = asyncio.create_task(collect(account_events(feed, "alice", Cursor(0, 0)), sent))
    try:
        await eventually(lambda: len(sent) == 1, what="the event recorded before")
        await eventually(lambda: log.following, what="the follower")
        second = log.add("alice", 3)
        log.add("bob", 4)
        log.notify()
        await eventually(lambda: len(sent) == 2, what="the event after the wake", timeout_s=10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert [s["id"] for s in sent] == ["101.1", "103.3"]
    assert [json.loads(s["data"]) for s in sent] == [first.public(), second.public()]
    assert {s["event"] for s in sent} == {"order.filled"}
    await eventually(lambda: not log.following, what="the follower cancelled with the stream")


async def test_one_follower_serves_every_stream_and_stops_with_the_last() -> None:
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=HOUR)
    async with feed.listen(), feed.listen():
        await eventually(lambda: log.following, what="the follower")
        assert feed.streams == 2
    await eventually(lambda: not log.following, what="the follower cancelled")
    assert log.followers == 1
    assert feed.streams == 0


async def test_without_a_cursor_the_stream_starts_from_now() -> None:
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=0.01)
    log.add("alice", 1)
    sent: list[dict[str, Any]] = []
    task = asyncio.create_task(collect(account_events(feed, "alice", None), sent))
    try:
        await eventually(lambda: log.following, what="the follower")
        log.add("alice", 2)
        await eventually(lambda: len(sent) == 1, what="the new event")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert [s["id"] for s in sent] == ["102.2"]


async def test_a_failed_read_is_read_again_on_the_next_poll() -> None:
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=0.01)
    log.add("alice", 1)
    log.fail_next = True
    sent: list[dict[str, Any]] = []
    task = asyncio.create_task(collect(account_events(feed, "alice", Cursor(0, 0)), sent))
    try:
        await eventually(lambda: len(sent) == 1, what="the event, read again")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert not log.fail_next


async def test_from_now_is_taken_before_the_first_line_goes_out() -> None:
    """A client reads what came before once the stream's first line arrived; an event
    recorded after that line must be on the stream."""
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=0.01)
    log.add("alice", 1)
    stream = cast(AsyncGenerator[dict[str, Any]], account_events(feed, "alice", None))
    try:
        first = await anext(stream)
        assert "retry" in first
        recorded = log.add("alice", 2)  # after the client saw the stream open
        sent = await asyncio.wait_for(anext(stream), timeout=10)
    finally:
        await stream.aclose()
    assert json.loads(sent["data"]) == recorded.public()


async def from_now_while_101_runs(
    log: FakeLog, feed: AccountEventsFeed, then: Callable[[], object], items: int
) -> list[dict[str, Any]]:
    """Alice's stream from now, opened while transaction 101 (her event 1) runs and after
    102 (her event 2) committed; 101 then commits, ``then`` runs, and ``items`` are read."""
    log.running.add(101)
    log.add("alice", 1, txid=101)
    log.add("alice", 2, txid=102)
    stream = cast(AsyncGenerator[dict[str, Any]], account_events(feed, "alice", None))
    try:
        await anext(stream)  # opened: "now" is taken
        log.running.discard(101)  # commits after the stream opened
        then()
        return [await asyncio.wait_for(anext(stream), timeout=10) for _ in range(items)]
    finally:
        await stream.aclose()


async def test_from_now_passes_over_what_committed_before_and_sends_what_was_running() -> None:
    """The stream reads from 101 on, sends 101's event once it commits, and never 102's."""
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=0.01)
    sent = await from_now_while_101_runs(log, feed, lambda: log.add("alice", 3, txid=103), 2)
    assert [s["id"] for s in sent] == ["101.1", "103.3"]


async def test_rows_passed_over_last_move_the_clients_id_without_an_event() -> None:
    """The stream's last read ends on a row it passes over: its cursor goes out as an id
    alone, so a client that reconnects with its Last-Event-ID is not sent that row either."""
    log = FakeLog()
    feed = AccountEventsFeed(log, poll_s=0.01)
    sent = await from_now_while_101_runs(log, feed, lambda: None, 2)
    assert sent[0]["id"] == "101.1"
    assert sent[1] == {"id": "102.2"}  # no event, no data: EventSource only keeps the id
    resumed = cast(
        AsyncGenerator[dict[str, Any]], account_events(feed, "alice", Cursor.parse(sent[1]["id"]))
    )
    try:
        await anext(resumed)
        log.add("alice", 3, txid=103)
        again = await asyncio.wait_for(anext(resumed), timeout=10)
    finally:
        await resumed.aclose()
    assert again["id"] == "103.3"
