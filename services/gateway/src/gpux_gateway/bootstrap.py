"""The one place that wires the gateway: the unit of work, views, subscribers, routes, loops."""

from __future__ import annotations

from pathlib import Path

from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.adapters.redis.balances import Balances
from gpux_gateway.adapters.redis.market_data import MarketData
from gpux_gateway.adapters.redis.ratelimit import RateLimiter
from gpux_gateway.config import GatewaySettings
from gpux_gateway.domain.backpressure import Capacity
from gpux_gateway.entrypoints import http, kafka
from gpux_gateway.entrypoints.backpressure import WriteGate
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.entrypoints.loops import lag_loop, purge_loop
from gpux_platform.compacted import load_end_offsets
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


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
    """Subscribers, routes, middleware and background loops of the gateway."""
    gw = make_gateway(runtime)
    relay = OutboxRelay(runtime.pool, runtime.broker, runtime.settings, "gateway")
    views = gw.views
    return Wiring(
        routers=[
            *kafka.memory_view_routers(views),
            kafka.views_router(runtime.settings, gw.unit_of_work, runtime.tracer_provider),
        ],
        http=list(http.ROUTERS),
        tasks=[
            relay.run,
            lambda: purge_loop(gw),
            lambda: lag_loop(gw, kafka.view_topics(runtime.settings)),
        ],
        on_started=[
            lambda: load_end_offsets(runtime.settings, views.catalog),
            lambda: load_end_offsets(runtime.settings, views.sessions),
            lambda: load_end_offsets(runtime.settings, views.books),
        ],
        configure_app=lambda app: http.configure(app, gw),
    )


SPEC = ServiceSpec(
    name="gateway",
    settings_type=GatewaySettings,
    wire=wire,
    migrations=MIGRATIONS,
    title="gpux API",
)
