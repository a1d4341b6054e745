"""A test that stalls fails with a report of what it waits for, and the run goes on.

Each attempt of a test (its setup, call and teardown together; a rerun is an attempt of its
own) still running after ``STALL_S`` has stalled. Its report is made (every thread's stack,
then every task of the session loop with its chain of awaits down to the future it waits on,
``gpux_platform.stalls``), and what the main thread waits for in the session loop (the task
``run_until_complete`` runs: the test's coroutine, or a fixture's setup or teardown) is
cancelled in the loop: the attempt fails there, its cleanup runs, and the run goes on (a
rerun may follow: ``plugin.RERUNS``). The cancel is repeated every ``CANCEL_EVERY_S`` while
the attempt swallows it. Every stall's report is printed in the run's summary ("stalled
tests"), a rerun that passed included. An attempt that is not waiting in the loop (a
synchronous test that blocks), or has not unwound ``UNWIND_S`` after its stall, ends the run
with the report, printed last. Off under a debugger and where pytest-timeout is off
(``--timeout=0``, ``PYTEST_TIMEOUT``, the ini, a ``timeout(0)`` mark); pytest-timeout's own
limit (pyproject) stays the backstop.

Registered by the gpux plugin (``plugin.pytest_configure``).
"""

from __future__ import annotations

import asyncio
import asyncio.base_events
import contextlib
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import pytest
import pytest_asyncio
from pytest_timeout import is_debugging

from gpux_platform.stalls import tasks_report, threads_report

STALL_S = float(os.environ.get("GPUX_TEST_STALL_S", "600"))
"""How long one attempt of a test may run before it has stalled. ``GPUX_TEST_STALL_S`` sets
another limit (to catch a hang sooner while chasing it)."""
UNWIND_S = 120.0
"""How long a stalled attempt has to unwind once cancelled, before the run ends; and how long
the rest of it (its teardown) may take after that."""
CANCEL_EVERY_S = 15.0
"""How often a stalled attempt's awaited task is cancelled again while it swallows the cancel."""
MAX_STALLS = 2
"""Stalls of one attempt (its call, then its teardown) before the run ends."""
LOOP_ANSWER_S = 10.0
"""How long the watch waits for the session loop to run what it asks (in the loop's thread)."""
STALLED = "stalled"
"""The cancel's message."""

P = ParamSpec("P")
T = TypeVar("T")
_RUN_UNTIL_COMPLETE: object = getattr(asyncio.base_events, "_run_until_complete_cb", None)
_session_loops: list[asyncio.AbstractEventLoop] = []
_stalls: list[tuple[str, str]] = []
"""Each stall of the run: the test's id and its report."""


@dataclass(eq=False)
class _Watch:
    """One attempt of a test, watched for a stall by a thread of its own."""

    item: pytest.Item
    limit: float
    report: str = ""
    done: threading.Event = field(default_factory=threading.Event)
    stalled: threading.Event = field(default_factory=threading.Event)
    unwound: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        threading.Thread(target=self._watch, name="gpux-stall-watch", daemon=True).start()

    def stop(self) -> None:
        self.done.set()

    def current(self) -> bool:
        """Whether this attempt is still the one running."""
        return not self.done.is_set() and self in _watching

    def unwinding(self) -> bool:
        """Whether the attempt has stalled and its failure is not reported yet."""
        return self.stalled.is_set() and not self.unwound.is_set()

    def _watch(self) -> None:
        """Wait for the attempt's end; at a stall report and cancel it; end the run when it does
        not unwind, or stalls again past ``MAX_STALLS`` (a teardown after the call's stall has
        ``UNWIND_S``)."""
        wait_s, stalls = self.limit, 0
        while not self.done.wait(wait_s):
            if is_debugging() or not self.current():  # a debugger attached since it began
                return
            stalls += 1
            self._stall()
            if stalls > MAX_STALLS or not self._cancel():
                _end_run(self)
                return
            wait_s = UNWIND_S

    def _stall(self) -> None:
        threads = threads_report()  # before the loop wakes to answer: where it waits
        loops = [_in_loop(loop, tasks_report, loop) for loop in list(_session_loops)]
        self.report = f"{threads}\n" + "\n".join(str(answer) for answer in loops)
        _stalls.append((self.item.nodeid, self.report))
        self.unwound.clear()
        self.stalled.set()

    def _cancel(self) -> bool:
        """Cancel what the main thread waits for in the session loop until the attempt's failure
        is reported; whether it was within ``UNWIND_S``."""
        deadline = time.monotonic() + UNWIND_S
        while time.monotonic() < deadline:
            cancelled = [_in_loop(loop, self._cancel_awaited, loop) for loop in _session_loops]
            if not any(answer is True for answer in cancelled):
                return self.unwound.is_set() or self.done.is_set()  # not waiting in a loop
            if self.unwound.wait(CANCEL_EVERY_S) or self.done.is_set():
                return True
        return False

    def _cancel_awaited(self, loop: asyncio.AbstractEventLoop) -> bool:
        """In the loop: cancel the task its ``run_until_complete`` runs, if this attempt is
        still the stalled one; whether there was one."""
        if not (self.current() and self.unwinding()):
            return False
        found = False
        for task in asyncio.all_tasks(loop):
            callbacks = getattr(task, "_callbacks", None) or ()
            if any(callback is _RUN_UNTIL_COMPLETE for callback, _ in callbacks):
                task.cancel(STALLED)
                found = True
        return found


_watching: list[_Watch] = []
"""The attempt now running, if it is watched (at most one)."""


@pytest_asyncio.fixture(scope="session", loop_scope="session", autouse=True)
async def session_loop() -> AsyncIterator[asyncio.AbstractEventLoop]:
    """The loop the session's async fixtures and tests run in (for the stall report)."""
    loop = asyncio.get_running_loop()
    _session_loops.append(loop)
    yield loop
    _session_loops.remove(loop)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Watch the attempt from its setup on."""
    for earlier in _watching:
        earlier.stop()
    _watching.clear()
    limit = stall_limit(item)
    if limit is not None:
        watch = _Watch(item, limit)
        _watching.append(watch)
        watch.start()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """Stop watching once the attempt's teardown is done, whatever its outcome (the watch is
    kept for the teardown's report, and replaced by the next attempt's)."""
    try:
        return (yield)
    finally:
        for watch in _watching:
            watch.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, object]:
    """The phase of an attempt that stalled fails (even where it swallowed the cancel), and
    says where its report is."""
    report = yield
    stalled = [w for w in _watching if w.item is item and w.unwinding()]
    if stalled:
        watch = stalled[0]
        message = (
            f"{item.nodeid} stalled: still running after {watch.limit:g} s and cancelled; what "
            "it waited for: 'stalled tests' in the run's summary"
        )
        if not report.failed:
            report.outcome = "failed"
            report.longrepr = message
        report.sections.append((STALLED, message))
        watch.unwound.set()
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Every stall's report, reruns that passed included."""
    if not _stalls:
        return
    terminalreporter.write_sep("=", "stalled tests: what each waited for")
    for nodeid, report in _stalls:
        terminalreporter.write_sep("-", nodeid)
        terminalreporter.write_line(report)


def _seconds(value: object) -> float | None:
    try:
        return None if value is None or value == "" else float(str(value))
    except ValueError:
        return None


def stall_limit(item: pytest.Item) -> float | None:
    """``STALL_S``; none where pytest-timeout is off (``--timeout=0``, ``PYTEST_TIMEOUT``, the
    ini, a ``timeout(0)`` mark) or a debugger is on; a ``timeout`` mark's limit less a minute
    (to come before pytest-timeout's), if longer."""
    config = item.config
    if config.getoption("usepdb", False) or is_debugging():
        return None
    marked = item.get_closest_marker("timeout")
    if marked is not None:
        own = _seconds(marked.kwargs.get("timeout", marked.args[0] if marked.args else None))
    else:
        own = None
        run = _seconds(config.getoption("timeout", None))
        if run is None:
            run = _seconds(os.environ.get("PYTEST_TIMEOUT"))
        if run is None:
            with contextlib.suppress(ValueError):  # no such ini key without pytest-timeout
                run = _seconds(config.getini("timeout"))
        if run == 0:
            return None
    if own == 0:
        return None
    return STALL_S if own is None else max(STALL_S, own - 60)


def _end_run(watch: _Watch) -> None:
    """In the watch's thread: the stalled attempt did not unwind; end the run."""
    if is_debugging():
        return
    capture = watch.item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    title = f" {watch.item.nodeid} has run over {watch.limit:g} s: what it waits for "
    sys.stderr.write(f"\n{title:+^100}\n{watch.report}\n")
    sys.stderr.flush()
    os._exit(1)  # as pytest-timeout ends a run: the stalled test holds the only loop


def _in_loop(
    loop: asyncio.AbstractEventLoop, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T | str:
    """What ``call`` returns, run in the loop's thread; a sentence where the loop is closed or
    does not run it within ``LOOP_ANSWER_S`` (its thread is blocked, or it is not running)."""
    if loop.is_closed():
        return "the session loop is closed"
    if not loop.is_running():
        return "the session loop is not running: the main thread is blocked outside it"
    made: list[T] = []
    done = threading.Event()

    def make() -> None:
        made.append(call(*args, **kwargs))
        done.set()

    try:
        loop.call_soon_threadsafe(make)
    except RuntimeError:
        return "the session loop is closed"
    if not done.wait(LOOP_ANSWER_S):
        return f"the session loop did not answer in {LOOP_ANSWER_S:g} s: its thread is blocked"
    return made[0]
