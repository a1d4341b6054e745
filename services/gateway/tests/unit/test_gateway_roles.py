"""What a gateway process runs by its role (``GPUX_GATEWAY_ROLE``): ``all`` the API and the
view consumers, ``api`` no view consumer group, ``views`` only the view consumers and the
outbox relay of the re-buys they place (no API routes, no other loop); a bad role is one line
naming the setting.

The wiring is built for real (``bootstrap.wire``) on clients that are made but never
connected: wiring opens no connection.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from faststream.kafka.subscriber.usecase import LogicSubscriber
from opentelemetry.sdk.trace import TracerProvider
from pydantic import ValidationError
from redis.asyncio import Redis

from gpux_gateway.bootstrap import PARTS, SPEC, Parts
from gpux_gateway.config import VIEWS_HTTP_PORT, GatewayRole, GatewaySettings
from gpux_gateway.entrypoints import http
from gpux_gateway.entrypoints.kafka import GROUPS
from gpux_gateway.entrypoints.loops import group_lag_loop, lag_loop
from gpux_platform.broker import make_broker
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, Wiring, settings_error_line

pytestmark = pytest.mark.unit

NAMESPACE = "t."
VIEW_GROUPS = {NAMESPACE + group for group in GROUPS.values()}
"""The consumer groups of the PostgreSQL views, in this test's namespace."""


def test_each_role_runs_its_parts() -> None:
    runs = {
        GatewayRole.ALL: Parts(api=True, views=True),
        GatewayRole.API: Parts(api=True, views=False),
        GatewayRole.VIEWS: Parts(api=False, views=True),
    }
    assert runs == PARTS


def test_the_role_is_all_unless_set_and_a_bad_one_names_the_setting() -> None:
    assert GatewaySettings().gateway_role is GatewayRole.ALL
    with pytest.raises(ValidationError) as refused:
        GatewaySettings(gateway_role="both")
    line = settings_error_line(refused.value)
    assert line.startswith("GPUX_GATEWAY_ROLE: "), line
    assert "'all', 'api' or 'views'" in line


def test_a_views_process_answers_on_its_own_port_unless_told() -> None:
    assert GatewaySettings(gateway_role="views").http_port == VIEWS_HTTP_PORT
    assert GatewaySettings(gateway_role="views", http_port=9000).http_port == 9000
    assert GatewaySettings(gateway_role="api").http_port == 8000


def test_in_prod_only_a_process_that_serves_the_api_needs_the_key_pepper() -> None:
    prod: dict[str, Any] = {"env": "prod", "database_url": "postgresql://svc:pw@db:5432/gpux"}
    for role in ("all", "api"):
        with pytest.raises(ValidationError, match="GPUX_KEY_PEPPER"):
            GatewaySettings(gateway_role=role, **prod)
    assert GatewaySettings(gateway_role="views", **prod).gateway_role is GatewayRole.VIEWS


@pytest.fixture
async def runtime_of() -> AsyncIterator[functools.partial[Runtime]]:
    """A runtime of the given settings whose clients are never connected."""
    pool = asyncpg.create_pool("postgresql://nobody@127.0.0.1:1/none")  # not awaited: no I/O
    redis = Redis.from_url("redis://127.0.0.1:1/0")
    yield functools.partial(runtime, pool=pool, redis=redis)
    await redis.aclose()


def runtime(settings: GatewaySettings, *, pool: asyncpg.Pool, redis: Redis) -> Runtime:
    return Runtime(
        "gateway", settings, pool, redis, make_broker(settings, "gateway"), TracerProvider()
    )


async def wired(runtime_of: functools.partial[Runtime], role: str) -> Wiring:
    settings = GatewaySettings(gateway_role=role, namespace=NAMESPACE)
    return await SPEC.wire(runtime_of(settings))


def groups(wiring: Wiring) -> list[str | None]:
    """The group of every subscriber (None: a topic read whole, without a group)."""
    found = []
    for router in wiring.routers:
        for subscriber in router.subscribers:
            assert isinstance(subscriber, LogicSubscriber), subscriber
            found.append(subscriber.group_id)
    return found


def loops(wiring: Wiring) -> list[object]:
    """The functions the wiring's partial tasks run (the others are lambdas or methods)."""
    return [t.func for t in wiring.tasks if isinstance(t, functools.partial)]


async def test_all_runs_the_api_and_the_view_consumers_with_the_lag_of_its_gauge(
    runtime_of: functools.partial[Runtime],
) -> None:
    wiring = await wired(runtime_of, "all")
    assert set(groups(wiring)) - {None} == VIEW_GROUPS
    assert list(wiring.http) == list(http.ROUTERS)
    assert wiring.configure_app is not None
    assert len(wiring.tasks) == 6  # outbox relay, purge, account events' retention, access
    # erasure, lag, webhooks
    assert loops(wiring) == [lag_loop]


async def test_api_joins_no_view_group_and_reads_their_lag_from_kafka(
    runtime_of: functools.partial[Runtime],
) -> None:
    wiring = await wired(runtime_of, "api")
    read = groups(wiring)
    assert read, "the in-memory views of compacted topics"
    assert set(read) == {None}  # no consumer group at all: never gateway.orders-status
    assert list(wiring.http) == list(http.ROUTERS)
    assert wiring.configure_app is not None
    assert len(wiring.tasks) == 6
    assert loops(wiring) == [group_lag_loop]
    (follow,) = [t for t in wiring.tasks if isinstance(t, functools.partial)]
    assert set(follow.args[1].values()) == VIEW_GROUPS


async def test_views_runs_only_the_view_consumers_and_the_relay_of_their_rebuys(
    runtime_of: functools.partial[Runtime],
) -> None:
    wiring = await wired(runtime_of, "views")
    assert sorted(g or "" for g in groups(wiring)) == sorted(VIEW_GROUPS)
    assert not wiring.http
    assert wiring.configure_app is None
    # The re-buys of interrupted leases are order.placed rows in the outbox: relayed here.
    (relay,) = wiring.tasks
    assert isinstance(getattr(relay, "__self__", None), OutboxRelay)
    assert not loops(wiring)
    assert not wiring.on_started
