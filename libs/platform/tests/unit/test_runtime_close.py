"""A stopping process's connections close within their bounds: a broker or Redis that does
not answer is left behind, and a pool still waiting for a connection nobody gives back is
terminated, so the process ends (``Runtime.close``)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from opentelemetry.sdk.trace import TracerProvider

from gpux_platform import service
from gpux_platform.service import Runtime
from gpux_platform.waiting import within

pytestmark = pytest.mark.unit


class Stuck:
    """A broker, Redis client or pool whose closing never ends (or, with ``hangs=False``,
    ends at once); says what was asked of it."""

    def __init__(self, *, hangs: bool = True) -> None:
        self.hangs = hangs
        self.asked: list[str] = []
        self.closed = False

    async def _closing(self, what: str) -> None:
        self.asked.append(what)
        if self.hangs:
            await asyncio.Event().wait()
        self.closed = True

    async def stop(self) -> None:
        await self._closing("stop")

    async def aclose(self) -> None:
        await self._closing("aclose")

    async def close(self) -> None:
        await self._closing("close")

    def terminate(self) -> None:
        if not self.closed:  # as asyncpg's: nothing once closed
            self.asked.append("terminate")


def runtime(broker: Stuck, redis: Stuck, pool: Stuck) -> Runtime:
    untouched = cast(Any, None)
    return Runtime(
        "things", untouched, cast(Any, pool), cast(Any, redis), cast(Any, broker), TracerProvider()
    )


async def test_close_ends_when_nothing_answers_and_terminates_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service, "CLOSE_S", {"broker": 0.05, "redis": 0.05, "pool": 0.05})
    broker, redis, pool = Stuck(), Stuck(), Stuck()
    await within(runtime(broker, redis, pool).close(), 5)
    assert (broker.asked, redis.asked, pool.asked) == (["stop"], ["aclose"], ["close", "terminate"])


async def test_a_pool_that_closes_is_not_terminated() -> None:
    broker, redis, pool = Stuck(hangs=False), Stuck(hangs=False), Stuck(hangs=False)
    await within(runtime(broker, redis, pool).close(), 5)
    assert (broker.asked, redis.asked, pool.asked) == (["stop"], ["aclose"], ["close"])


async def test_a_store_that_fails_to_close_does_not_keep_the_others_open() -> None:
    class Gone(Stuck):
        async def stop(self) -> None:
            raise ConnectionError("the broker is gone")

    broker, redis, pool = Gone(), Stuck(hangs=False), Stuck(hangs=False)
    await within(runtime(broker, redis, pool).close(), 5)
    assert (redis.asked, pool.asked) == (["aclose"], ["close"])


async def test_a_cancelled_close_cancels_what_it_waits_for_and_still_terminates_the_pool() -> None:
    broker, redis, pool = Stuck(), Stuck(), Stuck()
    closing = asyncio.create_task(runtime(broker, redis, pool).close())
    await asyncio.sleep(0.05)  # in the broker's stop
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert (broker.asked, pool.asked) == (["stop"], ["terminate"])
    await asyncio.sleep(0)
    assert not [t for t in asyncio.all_tasks() if "Stuck.stop" in repr(t.get_coro())]


async def test_a_close_cancelled_from_inside_is_said_and_the_others_still_close() -> None:
    class Quits(Stuck):
        async def stop(self) -> None:
            raise asyncio.CancelledError

    broker, redis, pool = Quits(), Stuck(hangs=False), Stuck(hangs=False)
    await within(runtime(broker, redis, pool).close(), 5)
    assert (redis.asked, pool.asked) == (["aclose"], ["close"])
