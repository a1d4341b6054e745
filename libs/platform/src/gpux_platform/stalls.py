"""What a stalled event loop waits for: every pending task with the chain of awaits it is
suspended in, down to the future at its end.

``Task.get_stack`` shows a suspended task's outermost coroutine only; a stop that hangs is
explained by the innermost await (a pool waiting for a connection, a server waiting for a
stream). ``tasks_report`` follows ``cr_await`` down the chain; an async generator's frames
cannot be reached from the task that awaits it (``async_generator_asend`` hides them), so
the generators that are suspended in an await are listed beside the tasks.

``stall_watch`` reports once when something takes longer than it should (a service's stop,
``service.serve``); the tests' plugin reports a stalled test with ``threads_report`` and
``tasks_report``.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import traceback
import types
from collections.abc import Callable
from typing import Any

REPR_CHARS = 300
"""How much of the awaited object's repr a line shows (a future's callbacks, a lock's state)."""


def _frame_of(awaited: object) -> types.FrameType | None:
    for name in ("cr_frame", "gi_frame", "ag_frame"):
        frame = getattr(awaited, name, None)
        if isinstance(frame, types.FrameType):
            return frame
    return None


def _awaiting(awaited: object) -> object | None:
    for name in ("cr_await", "gi_yieldfrom", "ag_await"):
        inner: object | None = getattr(awaited, name, None)
        if inner is not None:
            return inner
    return None


def await_chain(awaitable: object, waits_on: object | None = None) -> list[str]:
    """Where ``awaitable`` (a coroutine, generator or async generator) is suspended: one line
    per frame of its chain of awaits, outermost first, then what the last one awaits
    (``waits_on`` when given: the iterator of an awaited future does not show the future)."""
    lines: list[str] = []
    awaited: object | None = awaitable
    while awaited is not None:
        frame = _frame_of(awaited)
        if frame is None:  # a future's iterator, an async generator's asend, a finished one
            shown = awaited if waits_on is None else waits_on
            lines.append(f"  awaits {repr(shown)[:REPR_CHARS]}")
            break
        code = frame.f_code
        lines.append(f"  {code.co_filename}:{frame.f_lineno} in {code.co_qualname}")
        awaited = _awaiting(awaited)
    return lines


def task_chain(task: asyncio.Task[Any]) -> list[str]:
    """``await_chain`` of a task's coroutine, ending with the future the task waits on."""
    return await_chain(task.get_coro(), getattr(task, "_fut_waiter", None))


def tasks_report(loop: asyncio.AbstractEventLoop) -> str:
    """Every pending task of ``loop`` with its chain of awaits, and every async generator
    suspended in an await (what a task inside an ``async with`` of one waits for)."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    parts = [f"{len(tasks)} pending task(s):"]
    for task in sorted(tasks, key=lambda t: t.get_name()):
        parts.append(f"task {task.get_name()!r}")
        parts.extend(task_chain(task))
    generators = [
        g
        for g in gc.get_objects()
        if isinstance(g, types.AsyncGeneratorType) and g.ag_await is not None
    ]
    chains = [(g.__qualname__, await_chain(g)) for g in generators]
    # Those that wait on another generator first: the one that waits on a future is the end.
    chains.sort(key=lambda chain: "async_generator_asend" not in chain[1][-1])
    parts.append(f"{len(generators)} async generator(s) suspended in an await:")
    for name, chain in chains:
        parts.append(f"generator {name}")
        parts.extend(chain)
    return "\n".join(parts)


def threads_report() -> str:
    """The stack of every thread but the calling one (a watchdog's), by name."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        if ident != threading.get_ident():
            parts.append(f"thread {names.get(ident, '<unknown>')!r}:")
            parts.append("".join(traceback.format_stack(frame)).rstrip())
    return "\n".join(parts)


def stall_watch(what: str, after_s: float, report: Callable[[str], Any]) -> asyncio.Task[None]:
    """A task that, unless cancelled first, calls ``report`` once after ``after_s`` with what
    the running loop's tasks wait for (``what`` names the stalled work)."""
    loop = asyncio.get_running_loop()

    async def watch() -> None:
        await asyncio.sleep(after_s)
        report(f"{what} has taken over {after_s:g} s; {tasks_report(loop)}")

    return loop.create_task(watch(), name=f"stall watch: {what}")
