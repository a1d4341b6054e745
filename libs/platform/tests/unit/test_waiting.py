"""A bounded wait ends on its event, on its timeout, and always on a cancellation, also one
that arrives in the same loop step as the event (where 3.11's ``asyncio.wait_for`` loses it);
``stop_tasks`` ends a loop whose cancellation a library swallowed."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from gpux_platform.waiting import stop_tasks, within, woken

pytestmark = pytest.mark.unit


async def test_woken_says_whether_the_event_came_before_the_timeout() -> None:
    event = asyncio.Event()
    assert not await woken(event, 0.01)
    event.set()
    assert await woken(event, 10)


async def test_a_loop_of_woken_waits_stops_on_a_cancel_that_meets_the_event() -> None:
    event = asyncio.Event()
    rounds = 0

    async def loop() -> None:
        nonlocal rounds
        while True:
            await woken(event, 10)
            event.clear()
            rounds += 1

    task = asyncio.create_task(loop())
    await asyncio.sleep(0.01)  # the loop waits on the event
    event.set()  # the event and the stop in the same step, as at a service's shutdown
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=2)
    assert task in done
    assert task.cancelled()
    assert rounds == 0


async def test_within_gives_the_result_or_a_timeout() -> None:
    async def answer() -> int:
        return 42

    assert await within(answer(), 1) == 42
    with pytest.raises(TimeoutError):
        await within(asyncio.sleep(10), 0.01)


async def test_within_passes_a_cancel_on_when_the_result_meets_it() -> None:
    ready = asyncio.Event()

    async def waits() -> None:
        await within(ready.wait(), 10)
        await asyncio.sleep(10)  # reached only if the cancel was lost

    task = asyncio.create_task(waits())
    await asyncio.sleep(0.01)
    ready.set()
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=2)
    assert task in done
    assert task.cancelled()


async def fetching() -> None:
    """A client's own task, which takes a moment to clean up when cancelled."""
    try:
        await asyncio.sleep(10)
    finally:
        await asyncio.sleep(0.1)


async def closing_a_client(closing: asyncio.Event) -> None:
    """What aiokafka's ``close`` does: cancel its own task and await it, suppressing the
    CancelledError, also one meant for the caller that arrives meanwhile."""
    own = asyncio.create_task(fetching())
    await asyncio.sleep(0)
    own.cancel()
    closing.set()
    with contextlib.suppress(asyncio.CancelledError):
        await own
    closing.clear()


async def test_stop_tasks_ends_a_loop_whose_cancellation_a_library_swallowed() -> None:
    rounds = 0
    closing = asyncio.Event()

    async def monitor() -> None:  # a lag monitor: it closes its client, then waits a round
        nonlocal rounds
        for _ in range(40):  # ends by itself within seconds if nothing stops it
            await closing_a_client(closing)
            rounds += 1
            await asyncio.sleep(0.3)

    async def plain() -> None:
        await asyncio.sleep(10)

    swallowing = asyncio.create_task(monitor(), name="monitor")
    quiet = asyncio.create_task(plain(), name="plain")
    await closing.wait()
    swallowing.cancel()  # inside the client's close
    await asyncio.sleep(0.5)
    assert not swallowing.done()  # cancelled once, it goes on
    assert rounds >= 1

    await closing.wait()  # stopped inside the close again
    again = await within(stop_tasks([swallowing, quiet], grace_s=0.1, recancel_s=0.1), 5)
    assert swallowing.cancelled()
    assert quiet.cancelled()
    assert again[0] == "monitor"
    assert "plain" not in again


async def test_a_loop_cleaning_up_within_the_grace_is_not_cancelled_again() -> None:
    saved = asyncio.Event()

    async def expiry() -> None:  # saves its final snapshot once cancelled
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0.3)
            saved.set()

    task = asyncio.create_task(expiry(), name="expiry")
    await asyncio.sleep(0)
    assert await within(stop_tasks([task], grace_s=2, recancel_s=0.1), 5) == []
    assert saved.is_set()
