"""pytest plugin (entry point ``gpux``): tier markers by folder, per-session infrastructure,
``offset_commits`` (the offset commits of a test's consumers), and private stores to restart
(``private_postgres``, ``private_redis``, ``private_kafka``), a test that stalls failed with
what it waits for (``testing.stalls``), and one rerun for a failed test that is not a unit
test (``RERUNS``).

Each test session gets a fresh PostgreSQL database and a unique namespace that
prefixes its topics, consumer groups and Redis keys, so runs never see each
other's data. The database and the namespace's topics and keys are removed
when the session ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from pydantic import SecretStr

from gpux_contracts.ids import new_id
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing import stalls, stores
from gpux_devinfra.testing.endpoints import session_endpoints
from gpux_devinfra.testing.scratch import drop_namespace, scratch_database
from gpux_platform.settings import Environment, GpuxSettings

RERUNS = 1
"""A test of a tier that talks to real infrastructure or processes (every test not marked
``unit``) that fails is run once more (pytest-rerunfailures); the run's summary lists each
rerun with its first failure (``-rR``), and at most ``MAX_RERUNS`` are rerun in a run. A unit
test is never rerun."""


MAX_RERUNS = 5
"""Reruns in one run at the most (a broken change fails, it does not run twice)."""


def pytest_configure(config: pytest.Config) -> None:
    """Watch every test for a stall (``testing.stalls``); with pytest-rerunfailures, show each
    rerun's first failure and rerun at most ``MAX_RERUNS`` (options, not addopts: the run
    still starts with ``-p no:rerunfailures``)."""
    config.pluginmanager.register(stalls, "gpux-stalls")
    if config.pluginmanager.hasplugin("rerunfailures"):
        config.option.rerun_show_tracebacks = True
        if config.option.max_suite_reruns is None:
            config.option.max_suite_reruns = MAX_RERUNS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by the folder they live in: unit, integration or e2e; every test not marked
    ``unit`` may be rerun once (``RERUNS``)."""
    for item in items:
        parts = _parts(item)
        for tier in ("unit", "integration", "e2e"):
            if tier in parts:
                item.add_marker(getattr(pytest.mark, tier))
        if _rerun(item):
            item.add_marker(pytest.mark.flaky(reruns=RERUNS))


def _parts(item: pytest.Item) -> tuple[str, ...]:
    """The folders of the test's path below the run's root (not those above the checkout)."""
    try:
        return item.path.relative_to(item.config.rootpath).parts
    except ValueError:
        return item.path.parts


def _rerun(item: pytest.Item) -> bool:
    """Whether ``item`` may be rerun: pytest-rerunfailures is loaded, not a unit test, no rerun
    policy of its own, no debugger (pytest-rerunfailures refuses reruns with ``--pdb``)."""
    config = item.config
    if not config.pluginmanager.hasplugin("rerunfailures") or config.getoption("usepdb", False):
        return False
    return item.get_closest_marker("unit") is None and item.get_closest_marker("flaky") is None


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
async def second_own_settings(infra_endpoints: Endpoints) -> AsyncIterator[GpuxSettings]:
    """A second database and namespace of this test's own, beside ``own_settings`` (a
    reference run given the same input as the run under test); a rerun gets new ones."""
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
