"""A test that stalls is cancelled and fails with what it waits for, and the run goes on; a
failed test that is not a unit test is run once more. Each case is a pytest of its own (the
gpux plugin loaded by its entry point) with a stall limit of one second."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CONFIG = """[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
asyncio_default_test_loop_scope = session
"""
CONFTEST = """from gpux_devinfra.testing import stalls

stalls.STALL_S = 1.0
stalls.UNWIND_S = 1.0
stalls.CANCEL_EVERY_S = 0.2
"""
STALLED = """import asyncio


async def waits_for_ever(gate):
    await gate.wait()


async def test_that_stalls():
    await waits_for_ever(asyncio.Event())


async def test_after_it():
    left = [t for t in asyncio.all_tasks() if "test_that_stalls" in repr(t.get_coro())]
    assert not left, left
"""
STALLED_TEARDOWN = """import asyncio

import pytest


@pytest.fixture(scope="module")
async def closes_for_ever():
    yield
    await asyncio.Event().wait()


async def test_whose_module_fixture_never_closes(closes_for_ever):
    await asyncio.sleep(0)
"""
SWALLOWED = """import asyncio


async def test_that_swallows_every_cancel():
    while True:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            pass
"""
BLOCKED = """import time


def test_that_blocks_outside_the_loop():
    time.sleep(30)
"""
STALLS_ONCE = """import asyncio
from pathlib import Path

MARK = Path(__file__).with_name("ran")


async def test_that_stalls_the_first_time():
    if not MARK.exists():
        MARK.write_text("once")
        await asyncio.Event().wait()
"""
SLOW = """import asyncio


async def test_that_takes_two_seconds():
    await asyncio.sleep(2)
"""
FAILS_ONCE = """from pathlib import Path

import pytest

MARK = Path(__file__).with_name("ran")


@pytest.fixture(scope="module")
def shared():
    return []


def test_that_fails_the_first_time(shared):
    shared.append(1)
    if not MARK.exists():
        MARK.write_text("once")
        raise AssertionError("the first attempt fails")
    assert shared == [1, 1]  # the module's fixture is kept across the rerun
"""
UNIT_FAILS = """import pytest

pytestmark = pytest.mark.unit
RUNS = []


def test_a_unit_test_that_fails():
    RUNS.append(1)
    raise AssertionError(f"attempt {len(RUNS)}")
"""


NO_RERUNS = ("-p", "no:rerunfailures")


def pytest_output(tmp_path: Path, test: str, *options: str, exits: int, timeout: str = "60") -> str:
    """What a pytest of its own in ``tmp_path`` with ``test`` and the one-second stall limit
    printed, once it exited with ``exits``."""
    (tmp_path / "pytest.ini").write_text(CONFIG)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_it.py").write_text(test)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            f"timeout={timeout}",
            *options,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = run.stdout + run.stderr
    assert run.returncode == exits, out
    return out


def stall_report(out: str) -> str:
    """The part of a run's summary that shows each stall."""
    return out.split("stalled tests: what each waited for")[1]


def test_a_stalled_test_is_cancelled_and_fails_with_its_threads_and_awaits_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    out = pytest_output(tmp_path, STALLED, *NO_RERUNS, exits=1)
    assert "test_it.py::test_that_stalls stalled: still running after 1 s and cancelled" in out
    report = stall_report(out)
    assert "test_it.py::test_that_stalls" in report
    assert "thread 'MainThread':" in report
    tasks = report.split("pending task(s):")[1]
    assert "in test_that_stalls\n" in tasks
    assert "in waits_for_ever\n" in tasks
    assert "in Event.wait\n  awaits <Future pending" in tasks
    assert re.search(r"\b1 failed, 1 passed\b", out)  # and nothing of it ran on


def test_a_stalled_teardown_fails_the_test_with_its_report(tmp_path: Path) -> None:
    out = pytest_output(tmp_path, STALLED_TEARDOWN, *NO_RERUNS, exits=1)
    assert re.search(r"\b1 passed, .*1 error\b", out)
    assert "stalled: still running after 1 s and cancelled" in out
    assert "in closes_for_ever\n" in stall_report(out)


@pytest.mark.parametrize(
    ("test", "name"),
    [
        (SWALLOWED, "test_that_swallows_every_cancel"),
        (BLOCKED, "test_that_blocks_outside_the_loop"),
    ],
)
def test_a_stalled_test_that_does_not_unwind_ends_the_run_with_the_report(
    tmp_path: Path, test: str, name: str
) -> None:
    out = pytest_output(tmp_path, test, *NO_RERUNS, exits=1)
    assert f"test_it.py::{name} has run over 1 s: what it waits for" in out
    assert f"in {name}\n" in out
    assert not re.search(r"\d+ (passed|failed)", out)  # no summary: the run was ended


def test_a_stall_whose_rerun_passes_is_shown_in_the_summary(tmp_path: Path) -> None:
    out = pytest_output(tmp_path, STALLS_ONCE, "-rR", exits=0)
    assert "1 passed, 1 rerun" in out
    assert "RERUN test_it.py::test_that_stalls_the_first_time" in out
    assert "in test_that_stalls_the_first_time\n" in stall_report(out)


def test_no_stall_where_pytest_timeout_is_off(tmp_path: Path) -> None:
    out = pytest_output(tmp_path, SLOW, exits=0, timeout="0")
    assert "stalled" not in out


def test_a_failed_test_that_is_no_unit_test_is_rerun_once_and_listed(tmp_path: Path) -> None:
    out = pytest_output(tmp_path, FAILS_ONCE, "-rR", exits=0)
    assert "1 passed, 1 rerun" in out
    assert "RERUN test_it.py::test_that_fails_the_first_time" in out
    assert "the first attempt fails" in out


def test_a_unit_test_is_never_rerun(tmp_path: Path) -> None:
    out = pytest_output(tmp_path, UNIT_FAILS, "-rR", exits=1)
    assert re.search(r"\b1 failed\b", out)
    assert "RERUN" not in out
    assert "1 rerun" not in out
