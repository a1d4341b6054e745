"""What a stalled loop waits for: the chain of awaits of each task, down to the innermost
frame and the future it waits on; async generators suspended in an await beside them; and a
watch that reports once, unless its work ended first."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from gpux_platform.stalls import stall_watch, task_chain, tasks_report

pytestmark = pytest.mark.unit


async def innermost(gate: asyncio.Event) -> None:
    await gate.wait()


async def middle(gate: asyncio.Event) -> None:
    await innermost(gate)


@contextlib.asynccontextmanager
async def holding(gate: asyncio.Event) -> AsyncIterator[None]:
    yield
    await gate.wait()  # a stop that waits inside an ``async with``'s exit


async def test_the_chain_goes_down_to_the_innermost_await_and_its_future() -> None:
    gate = asyncio.Event()
    task = asyncio.create_task(middle(gate), name="waiter")
    await asyncio.sleep(0)
    try:
        chain = task_chain(task)
        assert [line.rsplit(" in ", 1)[-1] for line in chain[:-2]] == ["middle", "innermost"]
        assert chain[-2].endswith("in Event.wait")
        assert chain[-1].startswith("  awaits <Future pending")
        report = tasks_report(asyncio.get_running_loop())
        assert "task 'waiter'\n" + "\n".join(chain) in report
    finally:
        gate.set()
        await task


async def test_an_async_generator_suspended_in_an_await_is_reported() -> None:
    gate = asyncio.Event()

    async def leave() -> None:
        async with holding(gate):
            pass

    task = asyncio.create_task(leave(), name="leaving")
    await asyncio.sleep(0)
    try:
        report = tasks_report(asyncio.get_running_loop())
        generators = report.split("async generator(s) suspended in an await:")[1]
        assert "generator holding\n" in generators
        assert "in holding\n" in generators
        assert "in Event.wait" in generators
    finally:
        gate.set()
        await task


async def test_a_watch_reports_once_after_its_time_and_not_when_cancelled_first() -> None:
    reports: list[str] = []
    gate = asyncio.Event()
    task = asyncio.create_task(middle(gate), name="slow stop")
    watch = stall_watch("stopping", 0.01, reports.append)
    await asyncio.sleep(0.05)
    assert len(reports) == 1
    assert reports[0].startswith("stopping has taken over 0.01 s; ")
    assert "task 'slow stop'" in reports[0]
    assert watch.done()

    early = stall_watch("stopping", 10, reports.append)
    early.cancel()
    await asyncio.sleep(0)
    gate.set()
    await task
    assert len(reports) == 1
