"""The standard service: ``python -m gpux_<name>`` runs it with /healthz, /readyz and /metrics.

Start-up order: read settings (a bad value is one line naming the setting),
connect PostgreSQL, apply the service's migrations, connect Redis, create the
registry's topics, wire handlers, start the broker, then serve HTTP. Any
``ConfigError`` on the way ends the process with exit code 2 and one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import asyncpg
import uvicorn
import uvloop
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.routing import APIRoute
from faststream.kafka import KafkaBroker, KafkaRouter
from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.asyncio import Redis
from starlette.types import Message, Receive, Scope, Send

from gpux_contracts.topics import REGISTRY
from gpux_platform import asyncapi, migrations
from gpux_platform.asgi import HttpMiddleware
from gpux_platform.broker import ensure_topics, make_broker, started_producer
from gpux_platform.cache import create_redis
from gpux_platform.clock import Clock, SystemClock
from gpux_platform.db import create_pool
from gpux_platform.errors import ConfigError
from gpux_platform.lag import GroupLagMonitor, subscribed_groups
from gpux_platform.logs import setup_logging
from gpux_platform.metrics import CONSUMING, HTTP, HTTP_SECONDS, OUTBOX, ServiceMetrics
from gpux_platform.openapi import ProblemRule, install_openapi
from gpux_platform.outbox import OutboxRelay
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, install_problem_handlers, problem_response
from gpux_platform.producer_ids import check_sending
from gpux_platform.request_ids import RequestIds
from gpux_platform.settings import Environment, GpuxSettings
from gpux_platform.stalls import stall_watch, tasks_report
from gpux_platform.telemetry import (
    install_tracer_provider,
    instrument_app,
    instrument_libraries,
    make_tracer_provider,
    records,
)
from gpux_platform.waiting import awaited_for, stop_tasks

log = logging.getLogger("gpux.service")


CLOSE_S: Mapping[str, float] = {"broker": 8.0, "redis": 2.0, "pool": 5.0}
"""How long a stopping process waits for each of its connections to close."""


def _stall_extra() -> dict[str, str]:
    return {"tasks": tasks_report(asyncio.get_running_loop())}


@dataclass
class Runtime:
    """The connections one service process holds; handlers receive what they need of it."""

    name: str
    settings: GpuxSettings
    pool: asyncpg.Pool
    redis: Redis
    broker: KafkaBroker
    tracer_provider: TracerProvider
    clock: Clock = field(default_factory=SystemClock)
    metrics: ServiceMetrics = field(default_factory=ServiceMetrics)
    """The metric families this service exposes on /metrics (registered as it is wired)."""

    async def close(self) -> None:
        """Stop the broker and close the connections, each within ``CLOSE_S`` (one that takes
        longer is left, and said): a stop must end, and a pool waits for ever for a connection
        nobody gives back (it is terminated)."""
        closings: dict[str, Callable[[], Awaitable[None]]] = {
            "broker": self.broker.stop,
            "redis": self.redis.aclose,
            "pool": self.pool.close,
        }
        try:
            for what, closing in closings.items():
                try:
                    ended = await awaited_for(closing(), CLOSE_S[what])
                except Exception as exc:  # a store already gone: nothing more to close
                    log.warning("closing failed", extra={"store": what, "error": repr(exc)})
                    continue
                if not ended:
                    extra = {"store": what, **_stall_extra()}
                    log.warning("closing took too long; left", extra=extra)
        finally:
            self.pool.terminate()  # nothing once closed; a pool that did not close is ended


@dataclass
class Wiring:
    """What a service adds to the standard process: consumers, HTTP routes, background loops."""

    routers: Sequence[KafkaRouter] = ()
    http: Sequence[APIRouter] = ()
    tasks: Sequence[Callable[[], Awaitable[None]]] = ()
    on_started: Sequence[Callable[[], Awaitable[None]]] = ()
    configure_app: Callable[[FastAPI], None] | None = None


class Store(StrEnum):
    """A store a service process connects to; readiness checks each."""

    KAFKA = "kafka"
    """The broker: consumers, the outbox relay's sends."""
    POSTGRES = "postgres"
    """The service's own state, its inbox and its outbox."""
    REDIS = "redis"
    """Read models and rate limits: shared, rebuilt or degraded without it."""


NEEDS: frozenset[Store] = frozenset({Store.KAFKA, Store.POSTGRES})
"""What a service needs to be ready, unless its spec says otherwise: Redis only degrades
(rate limits fall back per process, a read model is repaired by the next change), and a
Redis blip must not take every pod out of its Service at once."""


@dataclass(frozen=True)
class ServiceSpec:
    """How to run one service."""

    name: str
    settings_type: type[GpuxSettings]
    wire: Callable[[Runtime], Awaitable[Wiring]]
    migrations: Path | None = None
    title: str | None = None
    needs: frozenset[Store] = field(default_factory=lambda: NEEDS)
    """The stores without which the process cannot do its work: /readyz fails without one."""
    metrics: tuple[Collector, ...] = ()
    """Platform metric families the service's own code records (e.g. ``metrics.SETTLEMENT``),
    beside those the platform registers for what it wires (HTTP, consumers, outbox relays)."""
    problems: tuple[ProblemRule, ...] = ()
    """The service's rules of which problems its operations can answer, for its OpenAPI
    document (beside the platform's, ``openapi.PLATFORM_RULES``)."""


def schema_of(name: str) -> str:
    """The PostgreSQL schema a service owns."""
    return name.replace("-", "_")


async def open_runtime(
    spec: ServiceSpec, settings: GpuxSettings, tracer_provider: TracerProvider | None = None
) -> Runtime:
    """Connect everything a service needs, or raise ConfigError naming the setting."""
    provider = tracer_provider or make_tracer_provider(spec.name, settings)
    pool = await create_pool(settings)
    try:
        # Every connection is checked before anything is changed, so a bad setting
        # stops the service with its one line and no half-done start-up.
        redis = await create_redis(settings)
        try:
            # Outside prod a service creates what it needs; in prod the platform owns topics
            # (replication, min ISR) and a missing one is a configuration error.
            await ensure_topics(settings, REGISTRY, create=settings.env is not Environment.PROD)
            applied = (
                await migrations.apply(pool, schema_of(spec.name), spec.migrations)
                if settings.migrate_on_start
                else []
            )
        except BaseException:
            await redis.aclose()
            raise
        if applied:
            log.info("migrations applied", extra={"applied": ",".join(applied)})
    except BaseException:
        await pool.close()
        raise
    broker = make_broker(settings, spec.name, provider)
    return Runtime(spec.name, settings, pool, redis, broker, provider, settings.clock())


async def check_within(probe: Callable[[], Awaitable[object]], timeout_s: float) -> str:
    """'ok', or why not: the exception's name, or 'no answer' when ``probe`` returned falsy."""
    try:
        async with asyncio.timeout(timeout_s):
            answered = await probe()
    except Exception as exc:  # any failure means not ready; the reason is reported
        return type(exc).__name__
    return "ok" if answered else "no answer"


async def readiness(runtime: Runtime) -> dict[str, str]:
    """Check Kafka (the broker answers and the producer still sends), PostgreSQL and Redis
    at once; each is 'ok' or the reason it is not.

    The checks run concurrently, each within ``readiness_timeout_s``, so /readyz answers
    within that (the probes give it 5 s); one store that hangs does not delay the others.
    """
    timeout_s = runtime.settings.readiness_timeout_s

    async def postgres() -> bool:
        return bool(await runtime.pool.fetchval("SELECT 1"))

    async def kafka() -> bool:
        check_sending(started_producer(runtime.broker))  # a producer that sends no more
        return bool(await runtime.broker.ping(timeout_s))

    probes: dict[str, Callable[[], Awaitable[object]]] = {
        Store.KAFKA: kafka,
        Store.POSTGRES: postgres,
        Store.REDIS: runtime.redis.ping,
    }
    results = await asyncio.gather(*(check_within(probe, timeout_s) for probe in probes.values()))
    return dict(zip(probes, results, strict=True))


def ready_status(checks: dict[str, str], needs: frozenset[Store]) -> str | None:
    """'ready' or 'degraded' (a store it can do without fails), or None: not ready."""
    if any(checks.get(store, "not checked") != "ok" for store in needs):
        return None
    return "ready" if all(v == "ok" for v in checks.values()) else "degraded"


class Liveness(BaseModel):
    """The process answers."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"status": "ok", "service": "gateway"}]}
    )

    status: str = "ok"
    service: str


class Readiness(BaseModel):
    """The stores the process needs answer (``degraded``: one it can do without does not)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"status": "ready", "checks": {"kafka": "ok", "postgres": "ok", "redis": "ok"}},
                {
                    "status": "degraded",
                    "checks": {"kafka": "ok", "postgres": "ok", "redis": "ConnectionError"},
                },
            ]
        }
    )

    status: str = Field(description="`ready` or `degraded`.")
    checks: dict[str, str] = Field(description="Each store: `ok`, or why it is not.")


def health_router(runtime: Runtime, needs: frozenset[Store] = NEEDS) -> APIRouter:
    """``/healthz`` (the process is up), ``/readyz`` (the stores it ``needs`` answer; the
    others are reported, and their failure makes it 'degraded', not unready), ``/metrics``."""
    router = APIRouter(tags=["health"])

    @router.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> Liveness:
        return Liveness(service=runtime.name)

    @router.get(
        "/readyz",
        summary="Readiness: Kafka, PostgreSQL and Redis answer",
        response_model=Readiness,
        responses={
            503: {
                "description": "A dependency does not answer",
                "content": {
                    PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}
                },
            }
        },
    )
    async def readyz(request: Request) -> Readiness | Response:
        checks = await readiness(runtime)
        status = ready_status(checks, needs)
        if status is not None:
            return Readiness(status=status, checks=checks)
        failing = ", ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok" and k in needs)
        return problem_response(request, 503, "not-ready", "Not ready", failing)

    @router.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(generate_latest(runtime.metrics), media_type=CONTENT_TYPE_LATEST)

    @router.get("/asyncapi.yaml", include_in_schema=False)
    async def event_catalogue() -> Response:
        return Response(asyncapi.render(), media_type="application/yaml")

    return router


class RequestMetrics(HttpMiddleware):
    """ASGI middleware: each request's ``gpux_http_request_seconds``, by route template.

    Plain ASGI (``asgi``), not ``@app.middleware("http")``. The histogram ends when the
    response starts, with its status code. (The server span is the FastAPI instrumentation's.)
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, timed until its response starts."""
        started = time.perf_counter()
        observed = False

        async def respond(message: Message) -> None:
            nonlocal observed
            if message["type"] == "http.response.start" and not observed:
                observed = True
                # The route template, not the path: ids in paths would make unbounded labels.
                route = getattr(scope.get("route"), "path", "unmatched")
                HTTP_SECONDS.labels(scope["method"], route, str(message["status"])).observe(
                    time.perf_counter() - started
                )
            await send(message)

        await self.app(scope, receive, respond)


def trace_requests(app: FastAPI, provider: TracerProvider) -> None:
    """A server span per HTTP request named by its route template, continuing the caller's
    trace (``traceparent``), and the request's ``gpux_http_request_seconds``."""
    instrument_app(app, provider)
    app.add_middleware(RequestMetrics)


def operation_id(route: APIRoute) -> str:
    """An operation's OpenAPI ``operationId``: its endpoint function's name (``place_order``),
    stable because it names what the operation does, not its path and method, so a
    generated client's methods keep their names when a path changes."""
    return route.name


def build_app(spec: ServiceSpec, runtime: Runtime, wiring: Wiring) -> FastAPI:
    """The service's HTTP app: health endpoints, its own routes, problem+json errors, and an
    ``X-Request-Id`` on every answer (``request_ids``)."""
    # FastAPI's own telemetry off: the instrumentation package makes the one server span
    # (FastAPI's would add a second one and a span per dependency to every request).
    app = FastAPI(
        title=spec.title or f"gpux {spec.name}",
        version="0.1.0",
        telemetry={"tracing": False, "metrics": False, "logs": False},
        generate_unique_id_function=operation_id,
    )
    install_problem_handlers(app)  # first: its middleware is the innermost
    trace_requests(app, runtime.tracer_provider)
    runtime.metrics.use((*HTTP, *spec.metrics))
    install_openapi(app, spec.problems)
    app.include_router(health_router(runtime, spec.needs))
    for router in wiring.http:
        app.include_router(router)
    if wiring.configure_app is not None:
        wiring.configure_app(app)
    app.add_middleware(RequestIds)  # outermost of the app's own: every answer carries its id
    return app


@contextlib.asynccontextmanager
async def started(runtime: Runtime, wiring: Wiring) -> AsyncIterator[None]:
    """Start the broker and the background loops (and the consumer groups' lag reading);
    stop them on exit."""
    for router in wiring.routers:
        runtime.broker.include_router(router)
    loops = [*wiring.tasks, *platform_loops(runtime, wiring)]
    await runtime.broker.start()
    for hook in wiring.on_started:
        await hook()
    tasks = [asyncio.ensure_future(loop()) for loop in loops]
    for task, loop in zip(tasks, loops, strict=True):  # named in logs and stall reports
        if isinstance(task, asyncio.Task):
            task.set_name(getattr(loop, "__qualname__", repr(loop)))
    try:
        yield
    finally:
        again = await stop_tasks(tasks)
        if again:  # a library swallowed their cancellation once (``waiting.stop_tasks``)
            log.warning("loops cancelled again to stop them", extra={"loops": again})


def platform_loops(runtime: Runtime, wiring: Wiring) -> list[Callable[[], Awaitable[None]]]:
    """Register the metric families of what the service wired (consumers, outbox relays) and
    return the platform's own loops: the lag reading of its consumer groups, if it has any."""
    if any(isinstance(getattr(loop, "__self__", None), OutboxRelay) for loop in wiring.tasks):
        runtime.metrics.use(OUTBOX)
    groups = subscribed_groups(runtime.broker.subscribers)
    if not runtime.broker.subscribers:
        return []
    runtime.metrics.use(CONSUMING)
    return [GroupLagMonitor(runtime.settings, groups).run] if groups else []


STOP_REPORT_S = 8.0
"""How long a stopping process may take after its server stopped (uvicorn's graceful 10 s for
open streams; with Kubernetes' 5 s preStop, 23 s of the 30 s grace period) before it logs what
its tasks wait for (``stalls.tasks_report``)."""


def server_config(app: FastAPI, settings: GpuxSettings) -> uvicorn.Config:
    """How a service's HTTP server runs in its own process (the tests' in-process services
    keep uvicorn's defaults, httptools too: ``gpux_devinfra.testing.services``)."""
    return uvicorn.Config(
        app,
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,
        lifespan="off",
        access_log=False,
        http="httptools",  # the C parser: h11, uvicorn's pure-Python default, costs ~15 %
        # Open event streams must not hold a stopping pod until it is killed.
        timeout_graceful_shutdown=10,
    )


async def serve(spec: ServiceSpec, settings: GpuxSettings) -> None:
    """Run one service until it is told to stop."""
    runtime = await open_runtime(spec, settings)
    install_tracer_provider(runtime.tracer_provider)
    if records(runtime.tracer_provider):  # a span per statement and record only if read
        instrument_libraries(runtime.tracer_provider)
    watch: asyncio.Task[None] | None = None
    try:
        wiring = await spec.wire(runtime)
        app = build_app(spec, runtime, wiring)
        async with started(runtime, wiring):
            server = uvicorn.Server(server_config(app, settings))
            log.info("serving", extra={"url": f"http://{settings.http_host}:{settings.http_port}"})
            try:
                await server.serve()
            finally:
                watch = stall_watch("stopping", STOP_REPORT_S, log.warning)
    finally:
        await runtime.close()
        runtime.tracer_provider.shutdown()
        if watch is not None:
            watch.cancel()
        log.info("stopped")


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM ends the process through its stop: the loops, the broker and the connections.

    While it serves, uvicorn takes SIGTERM (its graceful shutdown) and, once done, raises it
    again with the handler that was there before it; with the default one the process would
    die right there, before its loops and connections stop (consumers would not leave their
    groups). This one unwinds ``serve`` instead, as SIGINT's ``KeyboardInterrupt`` does.
    """
    raise SystemExit(0)


def settings_error_line(exc: ValidationError, prefix: str = "GPUX_") -> str:
    """One line naming the first bad setting."""
    first = exc.errors()[0]
    name = prefix + "_".join(str(p) for p in first["loc"]).upper() if first["loc"] else "settings"
    return f"{name}: {first['msg']}"


def main(spec: ServiceSpec) -> None:
    """Entry point of ``python -m gpux_<name>``: exit 2 with one line on bad configuration."""
    try:
        settings = spec.settings_type()
    except ValidationError as exc:
        print(f"gpux-{spec.name}: configuration error: {settings_error_line(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    setup_logging(spec.name, settings.log_level, settings.log_json)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        uvloop.run(serve(spec, settings))  # libuv's loop: the stdlib's costs more per wake-up
    except ConfigError as exc:
        print(f"gpux-{spec.name}: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        pass
