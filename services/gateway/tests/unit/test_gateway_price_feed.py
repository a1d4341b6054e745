"""The price stream's one reader per process, against a fake stream: every client fed from
one read, a slow client dropped alone, resume without gap or repeat, errors retried, and the
reader stopped when nobody listens and when the gateway stops."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.streams.feed import PriceFeed
from gpux_gateway.streams.repository import Entry
from gpux_gateway.streams.service import RETRY_MS, best_ask_events

pytestmark = pytest.mark.unit


def quote(gpu: str, price: str, as_of: str = "t") -> str:
    return json.dumps(
        {"gpu": gpu, "tier": "on_demand", "region": "*", "best": {"price": price}, "as_of": as_of}
    )


class FakeStream:
    """A stream of entries in memory, with the reads the feed makes of Redis; counts them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._added = asyncio.Event()
        self.reads = 0
        self.reading = 0
        self.most_reading = 0
        self.failures = 0
        """How many of the next reads raise a connection error."""
        self.on_history: Callable[[], None] | None = None

    def append(self, data: str) -> str:
        entry_id = f"{len(self.entries) + 1}-0"
        self.entries.append((entry_id, data))
        self._added.set()
        self._added = asyncio.Event()
        return entry_id

    def _after(self, start: str) -> list[Entry]:
        n = int(start.partition("-")[0])
        return self.entries[n:]

    async def price_entries_up_to(self, end: str, count: int) -> list[Entry]:
        upto = self.entries if end == "$" else self.entries[: int(end.partition("-")[0])]
        return list(reversed(upto))[:count]

    async def price_entries_after(self, start: str, count: int) -> list[Entry]:
        if self.on_history is not None:
            self.on_history()
        return self._after(start)[:count]

    async def read_prices(self, after: str, block_ms: int) -> list[Entry]:
        self.reads += 1
        self.reading += 1
        self.most_reading = max(self.most_reading, self.reading)
        try:
            if self.failures:
                self.failures -= 1
                raise ConnectionError("redis went away")
            if not self._after(after):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._added.wait(), block_ms / 1000)
            return self._after(after)
        finally:
            self.reading -= 1


async def soon(probe: Callable[[], object]) -> None:
    """Wait (bounded) until ``probe()`` holds."""
    await eventually(probe, interval_s=0.005, timeout_s=5)


class Client:
    """One client of the stream: the events it was sent (id, data), read in a task."""

    def __init__(self, feed: PriceFeed, start: str = "$") -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.opened = False
        self.ended = False
        self.task = asyncio.create_task(self._read(feed, start))

    async def _read(self, feed: PriceFeed, start: str) -> None:
        async for event in best_ask_events(feed, start):
            if "retry" in event:
                assert event["retry"] == RETRY_MS
                self.opened = True
            else:
                self.events.append((event["id"], json.loads(event["data"])))
        self.ended = True

    async def sent(self, count: int) -> None:
        """Wait until the client was sent ``count`` events."""
        await soon(lambda: len(self.events) >= count)

    def prices(self) -> list[str]:
        return [data["best"]["price"] for _, data in self.events]

    async def leave(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_many_clients_are_fed_by_one_read_at_a_time() -> None:
    stream = FakeStream()
    stream.append(quote("a", "0.50"))
    feed = PriceFeed(stream, block_ms=50)
    clients = [Client(feed) for _ in range(200)]
    await soon(lambda: feed.listeners == 200)
    await soon(lambda: stream.reads > 0)
    stream.append(quote("a", "0.50", as_of="t2"))  # the same quote: not a change
    stream.append(quote("a", "0.40"))
    await soon(lambda: all(c.prices() == ["0.40"] for c in clients))
    for client in clients:
        await client.leave()
    assert stream.most_reading == 1


async def test_a_slow_client_is_dropped_and_the_others_get_everything() -> None:
    stream = FakeStream()
    feed = PriceFeed(stream, queue_size=3, block_ms=50)
    fast = Client(feed)
    async with feed.listen() as slow:  # never reads while entries arrive
        await soon(lambda: feed.listeners == 2 and stream.reads > 0)
        for n in range(10):
            stream.append(quote("a", f"0.{n + 10}"))
            await fast.sent(n + 1)
        assert slow.dropped
        assert feed.listeners == 1
        kept = [update.data async for update in slow.updates()]  # what it had, then the end
    assert fast.prices() == [f"0.{n + 10}" for n in range(10)]
    assert kept == [quote("a", f"0.{n + 10}") for n in range(3)]
    assert not fast.ended
    await fast.leave()


async def test_a_client_resuming_reads_what_it_missed_then_joins_without_gap_or_repeat() -> None:
    stream = FakeStream()
    ids = [stream.append(quote("a", f"0.{n + 10}")) for n in range(6)]
    feed = PriceFeed(stream, block_ms=50)
    watcher = Client(feed)  # the feed runs before the client resumes
    await soon(lambda: stream.reads > 0)

    def meanwhile() -> None:
        """Appended while the client reads what it missed: in its history and its queue."""
        stream.append(quote("a", "0.20"))

    stream.on_history = meanwhile
    resumed = Client(feed, start=ids[2])
    await soon(lambda: len(resumed.events) >= 4)
    stream.on_history = None
    stream.append(quote("a", "0.10"))  # back to an earlier price: a change
    await soon(lambda: resumed.prices()[-1:] == ["0.10"])
    await resumed.leave()
    await watcher.leave()
    assert [i for i, _ in resumed.events] == [f"{n}-0" for n in range(4, 9)]
    assert resumed.prices() == ["0.13", "0.14", "0.15", "0.20", "0.10"]


async def test_a_client_from_now_repeats_nothing_a_book_already_said() -> None:
    stream = FakeStream()
    stream.append(quote("a", "0.50"))
    feed = PriceFeed(stream, block_ms=50)
    client = Client(feed)
    await soon(lambda: stream.reads > 0)
    stream.append(quote("a", "0.50", as_of="t2"))
    stream.append(quote("b", "0.50"))
    await soon(lambda: client.events)
    await client.leave()
    assert [(i, d["gpu"]) for i, d in client.events] == [("3-0", "b")]


async def test_read_errors_are_retried_from_the_same_entry_and_clients_stay() -> None:
    stream = FakeStream()
    feed = PriceFeed(stream, block_ms=50, retry_s=0)
    client = Client(feed)
    await soon(lambda: stream.reads > 0)
    stream.failures = 3
    first = stream.append(quote("a", "0.50"))
    await soon(lambda: client.events)
    assert not client.ended
    await client.leave()
    assert [i for i, _ in client.events] == [first]


async def test_the_feed_reads_only_while_someone_listens() -> None:
    stream = FakeStream()
    feed = PriceFeed(stream, block_ms=60_000)  # a read would block a minute
    await asyncio.sleep(0)
    assert stream.reads == 0
    assert not feed.reading
    client = Client(feed)
    await soon(lambda: stream.reading == 1)
    await client.leave()
    await soon(lambda: not feed.reading)  # the blocked read is cancelled
    assert stream.reading == 0
    again = Client(feed)
    await soon(lambda: stream.reading == 1)  # from now: what comes next
    stream.append(quote("a", "0.50"))
    await soon(lambda: again.events)
    await again.leave()
