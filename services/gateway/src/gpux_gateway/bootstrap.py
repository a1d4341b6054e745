"""The one place that wires the gateway: the unit of work, views, subscribers, routes, loops.

What one process runs depends on its role (``GPUX_GATEWAY_ROLE``, ``config.GatewayRole``):
``api`` serves the HTTP API, ``views`` keeps the PostgreSQL views from Kafka (and places the
re-buys of interrupted leases), ``all`` does both. Every role is the same service
(``SPEC``): one schema, one set of migrations, which any of them may apply (under the
migrations' advisory lock).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from faststream.kafka import KafkaRouter

from gpux_gateway.adapters.postgres.account_events import PostgresAccountEventsLog
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.adapters.redis.balances import Balances
from gpux_gateway.adapters.redis.market_data import MarketData
from gpux_gateway.adapters.redis.ratelimit import RateLimiter
from gpux_gateway.config import GatewayRole, GatewaySettings
from gpux_gateway.domain.backpressure import Capacity
from gpux_gateway.entrypoints import http, kafka, problems
from gpux_gateway.entrypoints.backpressure import WriteGate
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.entrypoints.loops import (
    erase_access_loop,
    group_lag_loop,
    lag_loop,
    purge_loop,
)
from gpux_gateway.entrypoints.webhooks import dispatch_loop
from gpux_gateway.notifications import retention
from gpux_gateway.notifications.feed import AccountEventsFeed
from gpux_gateway.streams.feed import PriceFeed
from gpux_platform.compacted import load_end_offsets
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


@dataclass(frozen=True)
class Parts:
    """What a gateway process runs."""

    api: bool
    """The HTTP API with the in-memory views of compacted topics, the outbox relay, the purge
    of idempotent responses and the door of writes."""
    views: bool
    """The batched consumers that keep the PostgreSQL views (offers, orders and fills,
    leases, ledger), and place the re-buys of interrupted leases (through the outbox: a
    ``views`` process runs an outbox relay of its own)."""


PARTS: Mapping[GatewayRole, Parts] = {
    GatewayRole.ALL: Parts(api=True, views=True),
    GatewayRole.API: Parts(api=True, views=False),
    GatewayRole.VIEWS: Parts(api=False, views=True),
}
"""The parts each role runs."""


def make_gateway(runtime: Runtime) -> Gateway:
    """The gateway's dependencies from a service runtime."""
    settings = runtime.settings
    assert isinstance(settings, GatewaySettings)
    limiter = RateLimiter(
        runtime.redis, settings.namespace, settings.rate_limit, settings.anonymous_rate_limit
    )
    views = kafka.memory_views(settings, settings.principal_cache_size)
    committed = views.principals.forget_committed
    return Gateway(
        settings=settings,
        clock=runtime.clock,
        unit_of_work=lambda: PostgresGatewayUnitOfWork(runtime.pool, runtime.clock, committed),
        limiter=limiter,
        market_data=MarketData(runtime.redis, settings),
        balances=Balances(runtime.redis, settings),
        views=views,
        writes=WriteGate(
            Capacity(
                settings.max_writes_in_flight,
                settings.max_view_lag,
                settings.overload_retry_after_s,
            )
        ),
    )


async def wire(runtime: Runtime) -> Wiring:
    """Subscribers, routes, middleware and background loops of the gateway's role."""
    settings = runtime.settings
    assert isinstance(settings, GatewaySettings)
    parts = PARTS[settings.gateway_role]
    if not parts.api:
        # The views place re-buys (order.placed in the outbox): publish them even when no API
        # process runs; the relays of one outbox take turns, so rows leave in seq order.
        relay = OutboxRelay(runtime.pool, runtime.broker, runtime.settings, "gateway")
        return Wiring(routers=[views_router(runtime)], tasks=[relay.run])
    return api_wiring(runtime, make_gateway(runtime), with_views=parts.views)


def views_router(runtime: Runtime, gw: Gateway | None = None) -> KafkaRouter:
    """The batched view consumers, on the API's units of work when it runs here (its key
    cache is told what they commit)."""
    units = (
        gw.unit_of_work
        if gw is not None
        else lambda: PostgresGatewayUnitOfWork(runtime.pool, runtime.clock)
    )
    return kafka.views_router(runtime.settings, units, runtime.tracer_provider)


def api_wiring(runtime: Runtime, gw: Gateway, *, with_views: bool) -> Wiring:
    """The API's part, and the view consumers beside it when ``with_views``.

    The door of writes follows the views' lag: this process's gauge when they run here, the
    view groups' committed offsets in Kafka when they run in ``views`` processes. The price
    stream has one reader per process, which runs while a client listens; so do the account
    event streams (one ``LISTEN``), whose old events a timer deletes.
    """
    relay = OutboxRelay(runtime.pool, runtime.broker, runtime.settings, "gateway")
    prices = PriceFeed(MarketData(runtime.redis, runtime.settings))
    account_events = AccountEventsFeed(PostgresAccountEventsLog(runtime.pool))
    retention_s = gw.settings.account_events_retention_s
    views = gw.views
    routers = kafka.memory_view_routers(views)
    follow: Callable[[], Awaitable[None]]
    if with_views:
        routers.append(views_router(runtime, gw))
        follow = functools.partial(lag_loop, gw, kafka.view_topics(runtime.settings))
    else:
        follow = functools.partial(group_lag_loop, gw, kafka.view_groups(runtime.settings))
    return Wiring(
        routers=routers,
        http=list(http.ROUTERS),
        tasks=[
            relay.run,
            lambda: purge_loop(gw),
            lambda: retention.purge_loop(gw.unit_of_work, retention_s),
            lambda: erase_access_loop(gw),
            follow,
            lambda: dispatch_loop(gw, runtime.pool),
        ],
        on_started=[
            lambda: load_end_offsets(runtime.settings, views.catalog),
            lambda: load_end_offsets(runtime.settings, views.sessions),
            lambda: load_end_offsets(runtime.settings, views.books),
        ],
        configure_app=lambda app: http.configure(app, gw, prices, account_events),
    )


SPEC = ServiceSpec(
    name="gateway",
    settings_type=GatewaySettings,
    wire=wire,
    migrations=MIGRATIONS,
    title="gpux API",
    problems=problems.RULES,
)
