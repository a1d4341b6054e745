"""Wait, bounded, for something that happens eventually (a read model, a consumer, a span).

``eventually`` is the one polling loop of the test tree: it calls a probe (plain or async)
until a check holds for what it returned, and fails with the last value once the time is up.
It never sleeps longer than needed and never passes on a timeout.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

LAST_VALUE_CHARS = 2000
"""How much of the last value a timeout's message shows."""


@overload
async def eventually(
    probe: Callable[[], Awaitable[T]],
    check: Callable[[T], object] = ...,
    *,
    what: str = ...,
    timeout_s: float = ...,
    interval_s: float = ...,
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], T],
    check: Callable[[T], object] = ...,
    *,
    what: str = ...,
    timeout_s: float = ...,
    interval_s: float = ...,
) -> T: ...


async def eventually(
    probe: Callable[[], Any],
    check: Callable[[Any], object] = bool,
    *,
    what: str = "",
    timeout_s: float = 30,
    interval_s: float = 0.2,
) -> Any:
    """Call ``probe()`` (awaiting it if it is async) every ``interval_s`` until
    ``check(value)`` holds (by default: the value is truthy); return that value.

    After ``timeout_s`` it fails with an AssertionError naming ``what`` and showing the last
    value. An exception from the probe or the check is not retried: it fails the test.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if check(value):
            return value
        if loop.time() >= deadline:
            shown = repr(value)[:LAST_VALUE_CHARS]
            raise AssertionError(
                f"timed out after {timeout_s:g} s waiting for {what or probe}; last: {shown}"
            )
        await asyncio.sleep(interval_s)
