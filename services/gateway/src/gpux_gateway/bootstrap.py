"""The one place that wires the gateway: routes, middleware, the outbox relay, housekeeping."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from gpux_gateway.adapters import repository
from gpux_gateway.adapters.ratelimit import RateLimiter
from gpux_gateway.api import (
    accounts,
    admin,
    catalog,
    history,
    leases,
    market,
    offers,
    orderbook,
    orders,
    prices,
    stream,
    wallets,
)
from gpux_gateway.body_limit import BodyLimitMiddleware
from gpux_gateway.config import GatewaySettings
from gpux_gateway.context import Gateway
from gpux_gateway.readmodels.catalog_consumer import catalog_router, catalog_view
from gpux_gateway.readmodels.leases_consumer import leases_router
from gpux_gateway.readmodels.ledger_consumer import ledger_router
from gpux_gateway.readmodels.market import market_router, market_view
from gpux_gateway.readmodels.offers_consumer import offers_status_router
from gpux_gateway.readmodels.orderbook import book_router, book_view
from gpux_gateway.readmodels.orders_consumer import orders_status_router
from gpux_platform.compacted import load_end_offsets
from gpux_platform.outbox import OutboxRelay
from gpux_platform.service import Runtime, ServiceSpec, Wiring

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
log = logging.getLogger("gpux.gateway")


def make_gateway(runtime: Runtime) -> Gateway:
    """The gateway's dependencies from a service runtime."""
    settings = runtime.settings
    assert isinstance(settings, GatewaySettings)
    limiter = RateLimiter(
        settings.redis_url, settings.namespace, settings.rate_limit, settings.anonymous_rate_limit
    )
    return Gateway(settings, runtime.pool, runtime.redis, runtime.clock, limiter)


def configure(gw: Gateway, app: FastAPI) -> None:
    """Middleware: body size limit, CORS for browser frontends."""
    app.add_middleware(BodyLimitMiddleware, max_bytes=gw.settings.max_body_bytes)
    if gw.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=gw.settings.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"],
            expose_headers=["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
        )


async def purge_loop(gw: Gateway, every_s: float = 3600) -> None:
    """Forget idempotent responses past their retention, hourly."""
    while True:
        removed = await repository.purge_responses(gw.pool, gw.clock.now() - gw.idempotency_ttl)
        if removed:
            log.info("idempotency records purged", extra={"count": removed})
        await asyncio.sleep(every_s)


async def wire(runtime: Runtime) -> Wiring:
    """Routes, middleware and background loops of the gateway."""
    gw = make_gateway(runtime)
    relay = OutboxRelay(runtime.pool, runtime.broker, runtime.settings, "gateway")
    view = catalog_view(runtime.settings)
    sessions = market_view(runtime.settings)
    books = book_view(runtime.settings)
    return Wiring(
        routers=[
            catalog_router(view),
            market_router(sessions),
            book_router(books),
            offers_status_router(runtime.settings, runtime.pool, runtime.clock),
            orders_status_router(runtime.settings, runtime.pool, runtime.clock),
            leases_router(runtime.settings, runtime.pool, runtime.clock),
            ledger_router(runtime.settings, runtime.pool),
        ],
        http=[
            accounts.router(gw),
            offers.router(gw),
            orders.router(gw),
            admin.router(gw),
            stream.router(gw),
            catalog.router(gw, view),
            prices.router(gw),
            history.router(gw),
            wallets.router(gw),
            market.router(gw, sessions),
            orderbook.router(gw, books, view),
            leases.router(gw),
        ],
        tasks=[relay.run, lambda: purge_loop(gw)],
        on_started=[
            lambda: load_end_offsets(runtime.settings, view),
            lambda: load_end_offsets(runtime.settings, sessions),
            lambda: load_end_offsets(runtime.settings, books),
        ],
        configure_app=lambda app: configure(gw, app),
    )


SPEC = ServiceSpec(
    name="gateway",
    settings_type=GatewaySettings,
    wire=wire,
    migrations=MIGRATIONS,
    title="gpux API",
)
