"""pytest plugin (entry point ``gpux``): tier markers by folder, per-session infrastructure,
``offset_commits`` (the offset commits of a test's consumers), and private stores to restart
(``private_postgres``, ``private_redis``, ``private_kafka``), and a report of what a test
waits for when it runs too long (``STALL_S``).

Each test session gets a fresh PostgreSQL database and a unique namespace that
prefixes its topics, consumer groups and Redis keys, so runs never see each
other's data. The database and the namespace's topics and keys are removed
when the session ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiokafka import AIOKafkaConsumer
from pydantic import SecretStr
from pytest_timeout import is_debugging

from gpux_contracts.ids import new_id
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing import stores
from gpux_devinfra.testing.endpoints import session_endpoints
from gpux_devinfra.testing.scratch import drop_namespace, scratch_database
from gpux_platform.settings import Environment, GpuxSettings
from gpux_platform.stalls import tasks_report, threads_report

STALL_S = float(os.environ.get("GPUX_TEST_STALL_S", "840"))
"""A test (its setup, call and teardown together) still running after this long ends the run
with a report of what it waits for: the threads' stacks, then the session loop's tasks with
their chains of awaits (last: the part of a long log that is read). pytest-timeout's limit
(900 s, pyproject) is the backstop; its own report shows a loop in ``select``, not for what.
``GPUX_TEST_STALL_S`` sets another limit (to catch a hang sooner while chasing it)."""
LOOP_ANSWER_S = 10.0
"""How long the report waits for the session loop to describe its tasks (in its own thread)."""

_session_loops: list[asyncio.AbstractEventLoop] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by the folder they live in: unit, integration or e2e."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        for tier in ("unit", "integration", "e2e"):
            if tier in parts:
                item.add_marker(getattr(pytest.mark, tier))


@pytest_asyncio.fixture(scope="session", loop_scope="session", autouse=True)
async def session_loop() -> AsyncIterator[asyncio.AbstractEventLoop]:
    """The loop the session's async fixtures and tests run in (for the stall report)."""
    loop = asyncio.get_running_loop()
    _session_loops.append(loop)
    yield loop
    _session_loops.remove(loop)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    """End the run with a report of what ``item`` waits for if it runs past ``STALL_S`` (or
    its ``timeout`` mark's limit, if longer); not under a debugger or with ``--timeout=0``."""
    limit = _stall_limit(item)
    if limit is None:
        yield
        return
    timer = threading.Timer(limit, _end_stalled_run, args=(item, limit))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _seconds(value: object) -> float | None:
    try:
        return None if value is None or value == "" else float(str(value))
    except ValueError:
        return None


def _stall_limit(item: pytest.Item) -> float | None:
    """``STALL_S``; none where pytest-timeout is off (``--timeout=0``, ``PYTEST_TIMEOUT``, the
    ini, a ``timeout(0)`` mark) or a debugger is on; a ``timeout`` mark's limit, if longer,
    less a minute (this report comes before pytest-timeout's)."""
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


def _end_stalled_run(item: pytest.Item, limit: float) -> None:
    if is_debugging():  # attached since the test began
        return
    threads = threads_report()  # before the loop wakes to answer: where it waits
    reports = [_loop_report(loop) for loop in list(_session_loops)]
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    title = f" {item.nodeid} has run over {limit:g} s: what it waits for "
    sys.stderr.write(f"\n{title:+^100}\n{threads}\n" + "\n".join(reports) + "\n")
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


@pytest.fixture(scope="session")
def infra_endpoints() -> Iterator[Endpoints]:
    """Kafka, PostgreSQL and Redis for this session (environment, containers or local)."""
    with session_endpoints() as endpoints:
        yield endpoints


@pytest.fixture(scope="session")
def session_tag() -> str:
    """A short unique tag for this test session."""
    return "t" + new_id()[-10:].lower()


@pytest.fixture(scope="session")
async def gpux_settings(
    infra_endpoints: Endpoints, session_tag: str
) -> AsyncIterator[GpuxSettings]:
    """Settings pointing at a fresh database and a fresh namespace; cleaned up afterwards."""
    async with isolated_settings(infra_endpoints, session_tag) as settings:
        yield settings


@pytest.fixture(scope="module")
async def module_settings(infra_endpoints: Endpoints) -> AsyncIterator[GpuxSettings]:
    """Like ``gpux_settings``, but a database and namespace of this test module's own.

    For modules that run whole services, whose start-up state (published versions,
    consumer groups) must not meet other modules' tests.
    """
    async with isolated_settings(infra_endpoints, _module_tag()) as settings:
        yield settings


@pytest.fixture(scope="module")
async def second_module_settings(infra_endpoints: Endpoints) -> AsyncIterator[GpuxSettings]:
    """A second database and namespace of this test module's own, beside ``module_settings``
    (for a reference run that gets the same input as the run under test)."""
    async with isolated_settings(infra_endpoints, _module_tag()) as settings:
        yield settings


@pytest.fixture
async def own_settings(infra_endpoints: Endpoints) -> AsyncIterator[GpuxSettings]:
    """A database and namespace of this test's own, for a test whose service process must be
    alone with them: on ``gpux_settings`` the session's in-process services (the gateway
    fixture's outbox relay, for one) would take part of its work."""
    async with isolated_settings(infra_endpoints, _module_tag()) as settings:
        yield settings


@pytest.fixture
def offset_commits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The consumer group of every offset commit made in this process during the test, in
    order (for showing that a batch's offsets are committed once)."""
    groups: list[str] = []
    original = AIOKafkaConsumer.commit

    async def counted(self: AIOKafkaConsumer, *args: Any, **kwargs: Any) -> None:
        groups.append(str(self._group_id))
        await original(self, *args, **kwargs)

    monkeypatch.setattr(AIOKafkaConsumer, "commit", counted)
    return groups


@pytest.fixture
def private_postgres() -> Iterator[stores.PrivateStore]:
    """A PostgreSQL of this test's own, to stop and restart (``stores.private_postgres``)."""
    with stores.private_postgres() as store:
        yield store


@pytest.fixture
def private_redis() -> Iterator[stores.PrivateStore]:
    """A Redis of this test's own, to stop and restart (``stores.private_redis``)."""
    with stores.private_redis() as store:
        yield store


@pytest.fixture
def private_kafka() -> Iterator[stores.PrivateStore]:
    """A Kafka broker of this test's own, to stop and restart (``stores.private_kafka``)."""
    with stores.private_kafka() as store:
        yield store


def _module_tag() -> str:
    return "m" + new_id()[-10:].lower()


@contextlib.asynccontextmanager
async def isolated_settings(infra_endpoints: Endpoints, tag: str) -> AsyncIterator[GpuxSettings]:
    """Settings pointing at a fresh database ``gpux_<tag>`` and the namespace ``<tag>.``;
    the database, the namespace's topics and its Redis keys are removed afterwards."""
    async with scratch_database(infra_endpoints.database_url, f"gpux_{tag}") as database_url:
        settings = GpuxSettings(
            env=Environment.TEST,
            kafka_bootstrap=infra_endpoints.kafka_bootstrap,
            database_url=SecretStr(database_url),
            redis_url=infra_endpoints.redis_url,
            namespace=f"{tag}.",
            connect_timeout_s=10,
        )
        try:
            yield settings
        finally:  # a failing body must not leave its topics and keys behind
            await drop_namespace(infra_endpoints, settings.namespace)
