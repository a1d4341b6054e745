"""A test that stalls ends the run with what it waits for: the gpux plugin (loaded by its entry
point in a pytest of its own, with a stall limit of one second) prints the threads' stacks
and then the session loop's tasks down to the innermost await, and exits 1."""

from __future__ import annotations

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
CONFTEST = """from gpux_devinfra.testing import plugin

plugin.STALL_S = 1.0
"""
STALLED = """import asyncio


async def waits_for_ever(gate):
    await gate.wait()


async def test_that_stalls():
    await waits_for_ever(asyncio.Event())
"""


SLOW = """import asyncio


async def test_that_takes_two_seconds():
    await asyncio.sleep(2)
"""


def run_pytest(tmp_path: Path, test: str, timeout: str) -> subprocess.CompletedProcess[str]:
    """A pytest of its own in ``tmp_path`` with ``test`` and the one-second stall limit."""
    (tmp_path / "pytest.ini").write_text(CONFIG)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_it.py").write_text(test)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", f"timeout={timeout}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_stalled_test_ends_the_run_with_its_threads_and_its_awaits(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, STALLED, timeout="60")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "test_it.py::test_that_stalls has run over 1 s: what it waits for" in out
    assert "thread 'MainThread':" in out
    tasks = out.split("pending task(s):")[1]
    assert "in test_that_stalls\n" in tasks
    assert "in waits_for_ever\n" in tasks
    assert "in Event.wait\n  awaits <Future pending" in tasks


def test_no_stall_report_where_pytest_timeout_is_off(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, SLOW, timeout="0")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "has run over" not in run.stdout + run.stderr
