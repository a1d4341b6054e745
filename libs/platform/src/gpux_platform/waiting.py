"""Bounded waits that a cancellation always ends.

Python 3.11's ``asyncio.wait_for`` returns the awaited result when a cancellation arrives in
the same loop step as that result (CPython gh-86296, fixed in 3.12): the cancel is consumed and
lost. A service loop of the form ``while True: await wait_for(event.wait(), poll_s)`` then
never stops (a stopping service's ``task.cancel()`` comes once), so the service hangs at
shutdown until it is killed. ``asyncio.timeout`` counts its own cancellations apart from the
caller's and has no such gap; every bounded wait of ours goes through it (ruff bans
``asyncio.wait_for`` in the services' and libraries' code). ``stop_tasks`` ends tasks even
when a library they call swallows their cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


async def woken(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait until ``event`` is set (True) or ``timeout_s`` passed (False); a cancellation
    always propagates."""
    try:
        async with asyncio.timeout(timeout_s):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def within(awaitable: Awaitable[T], timeout_s: float) -> T:
    """``awaitable``'s result, or ``TimeoutError`` after ``timeout_s``; a cancellation always
    propagates."""
    async with asyncio.timeout(timeout_s):
        return await awaitable


STOP_GRACE_S = 5.0
"""How long ``stop_tasks`` lets a cancelled task clean up (a final snapshot) before it
cancels it again."""
RECANCEL_S = 1.0
"""How often ``stop_tasks`` cancels again, after the grace, a task that is still running."""


async def stop_tasks(
    tasks: Sequence[asyncio.Future[Any]],
    *,
    grace_s: float = STOP_GRACE_S,
    recancel_s: float = RECANCEL_S,
) -> list[str]:
    """Cancel ``tasks`` and wait until every one has ended; returns the names of those that had
    to be cancelled again.

    A library that awaits its own task inside ``try: ... except CancelledError: pass`` (aiokafka
    closing a client does) consumes a cancellation meant for the task that called it, which
    then goes on as if never cancelled; one ``cancel()`` and a ``gather`` wait for it for ever.
    A task still running ``grace_s`` after the first cancel is cancelled again every
    ``recancel_s``, until it ends.
    """
    for task in tasks:
        task.cancel()
    again: dict[str, None] = {}
    _, pending = await asyncio.wait(tasks, timeout=grace_s) if tasks else (set(), set())
    while pending:
        for task in pending:
            again[task.get_name() if isinstance(task, asyncio.Task) else repr(task)] = None
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=recancel_s)
    return list(again)


_LEFT: set[asyncio.Future[Any]] = set()
"""What ``awaited_for`` gave up on and left running (held, so it is not collected mid-way)."""


async def awaited_for(awaitable: Awaitable[Any], timeout_s: float) -> bool:
    """Run ``awaitable`` in a task of its own and wait up to ``timeout_s`` for it: True if it
    ended (its error, if any, raised; a cancellation from inside as ``RuntimeError``), False if
    it is still running (then it is cancelled and left: a cancellation it swallows cannot hold
    the caller as one inside ``within`` would). A cancelled caller cancels it too."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        _LEFT.add(task)
        task.add_done_callback(_LEFT.discard)
        return False
    if task.cancelled():
        raise RuntimeError("cancelled from inside")
    task.result()
    return True
