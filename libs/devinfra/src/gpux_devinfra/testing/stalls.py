"""A test that stalls fails with a report of what it waits for, and the run goes on.

Each attempt of a test (its setup, call and teardown together; a rerun is an attempt of its
own) still running after ``STALL_S`` has stalled: the report of what it waits for is made
(every thread's stack, then every task of the session loop with its chain of awaits down to
the future it waits on, ``gpux_platform.stalls``) and the main thread is interrupted
(``SIGUSR1``), which fails the attempt there with that report as a section of its own (a
rerun may follow: ``plugin.RERUNS``). An attempt that has not unwound ``UNWIND_S`` later
(blocked where no signal handler runs, or the failure was swallowed) ends the run with the
report, printed last. Off under a debugger and where pytest-timeout is off (``--timeout=0``,
``PYTEST_TIMEOUT``, the ini, a ``timeout(0)`` mark); pytest-timeout's own limit (pyproject)
stays the backstop.

Registered by the gpux plugin (``plugin.pytest_configure``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass, field
from types import FrameType

import pytest
import pytest_asyncio
from pytest_timeout import is_debugging

from gpux_platform.stalls import tasks_report, threads_report

STALL_S = float(os.environ.get("GPUX_TEST_STALL_S", "600"))
"""How long one attempt of a test may run before it has stalled. ``GPUX_TEST_STALL_S`` sets
another limit (to catch a hang sooner while chasing it)."""
UNWIND_S = 120.0
"""How long a stalled attempt has to unwind once interrupted, before the run ends; and how long
the rest of it (its teardown) may take after that."""
RETRY_S = 2.0
"""How often a stalled attempt is interrupted until it unwinds."""
MAX_STALLS = 2
"""Stalls of one attempt (its call, then its teardown) before the run ends."""
LOOP_ANSWER_S = 10.0
"""How long the report waits for the session loop to describe its tasks (in its own thread)."""
INTERRUPT = signal.SIGUSR1
SECTION = "what the stalled test waited for"

_session_loops: list[asyncio.AbstractEventLoop] = []


@dataclass
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

    def _watch(self) -> None:
        """Wait for the attempt's end; at each stall report and interrupt it; end the run when
        it does not unwind, or stalls again past ``MAX_STALLS`` (a teardown after the call's
        stall has ``UNWIND_S``)."""
        wait_s, stalls = self.limit, 0
        while not self.done.wait(wait_s):
            if is_debugging():  # attached since the test began
                return
            stalls += 1
            self._stall()
            if stalls > MAX_STALLS or not self._interrupt():
                _end_run(self)
                return
            wait_s = UNWIND_S

    def _stall(self) -> None:
        threads = threads_report()  # before the loop wakes to answer: where it waits
        loops = [_loop_report(loop) for loop in list(_session_loops)]
        self.report = f"{threads}\n" + "\n".join(loops)
        self.unwound.clear()
        self.stalled.set()

    def _interrupt(self) -> bool:
        """Interrupt the main thread until the attempt's failure is reported (an interrupt can
        land where asyncio logs and drops it: in a callback); whether it was within
        ``UNWIND_S``."""
        main = threading.main_thread().ident or 0
        deadline = time.monotonic() + UNWIND_S
        while time.monotonic() < deadline:
            signal.pthread_kill(main, INTERRUPT)
            if self.unwound.wait(RETRY_S) or self.done.is_set():
                return True
        return False

    def unwinding(self) -> bool:
        """Whether the attempt has stalled and its failure is not reported yet."""
        return self.stalled.is_set() and not self.unwound.is_set()


_watching: list[_Watch] = []
"""The attempt now running, if it is watched (at most one)."""


def install() -> None:
    """Take the interrupt in the main thread (pytest's, where the session loop runs)."""
    signal.signal(INTERRUPT, _on_interrupt)


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
    """A failed phase of a stalled attempt carries the report of what it waited for."""
    report = yield
    stalled = [w for w in _watching if w.item is item and w.unwinding()]
    if stalled and report.failed:
        report.sections.append((SECTION, stalled[0].report))
        stalled[0].unwound.set()
    return report


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


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    """In the main thread: fail the stalled attempt where it waits."""
    watch = next((w for w in _watching if w.unwinding() and not w.done.is_set()), None)
    if watch is not None:
        pytest.fail(
            f"{watch.item.nodeid} stalled: still running after {watch.limit:g} s "
            "(its threads and tasks: the section below)",
            pytrace=False,
        )


def _end_run(watch: _Watch) -> None:
    """In the timer's thread: the interrupted attempt did not unwind; end the run."""
    if is_debugging():
        return
    capture = watch.item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    title = f" {watch.item.nodeid} has run over {watch.limit:g} s: what it waits for "
    report = watch.report or threads_report()
    sys.stderr.write(f"\n{title:+^100}\n{report}\n")
    sys.stderr.flush()
    os._exit(1)  # as pytest-timeout ends a run: the stalled test holds the only loop


def _loop_report(loop: asyncio.AbstractEventLoop) -> str:
    made: list[str] = []
    done = threading.Event()

    def make() -> None:
        made.append(tasks_report(loop))
        done.set()

    try:
        loop.call_soon_threadsafe(make)
    except RuntimeError:
        return "the session loop is closed"
    if not done.wait(LOOP_ANSWER_S):
        return f"the session loop did not answer in {LOOP_ANSWER_S:g} s: its thread is blocked"
    return made[0]
