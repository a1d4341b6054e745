"""Run gpux services inside the test process (uvicorn on a free loopback port).

``running`` starts one service the way ``python -m gpux_<name>`` would (its runtime, its
wiring, its HTTP app) and yields where it listens; ``stack`` starts several, in order, for
the flows that go through the public API; ``chain_at_speed`` starts them on a fast clock and
yields a client of the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

import httpx
import uvicorn
from faststream.kafka.subscriber.usecase import LogicSubscriber
from opentelemetry.sdk.trace import TracerProvider

from gpux_platform.service import ServiceSpec, build_app, open_runtime, started
from gpux_platform.settings import GpuxSettings


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Running(NamedTuple):
    """A service running in this process: its base URL and the settings it runs with."""

    url: str
    settings: GpuxSettings

    def client(self, key: str | None = None, *, timeout_s: float = 30) -> httpx.AsyncClient:
        """A client of its HTTP API, as ``key``'s account when given."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout_s)


def service_settings(spec: ServiceSpec, base: GpuxSettings, **overrides: Any) -> GpuxSettings:
    """``spec``'s settings on the session's endpoints (``base``), a free HTTP port and
    ``overrides`` by setting name."""
    values = {
        **base.model_dump(),
        "database_url": base.database_url,
        "http_host": "127.0.0.1",
        "http_port": free_port(),
    }
    return spec.settings_type(**{**values, **overrides})


@contextlib.asynccontextmanager
async def running(
    spec: ServiceSpec,
    base: GpuxSettings,
    *,
    tracer_provider: TracerProvider | None = None,
    **overrides: Any,
) -> AsyncIterator[Running]:
    """Start a service with the session's endpoints (plus overrides); yield its URL and settings.

    ``tracer_provider`` replaces the one the settings would make, so a test can collect the
    spans of several in-process services (each with its own ``service.name``) in one exporter.
    """
    settings = service_settings(spec, base, **overrides)
    runtime = await open_runtime(spec, settings, tracer_provider)
    try:
        wiring = await spec.wire(runtime)
        app = build_app(spec, runtime, wiring)
        # uvicorn's defaults, not the process's ``service.server_config``: the protocol is
        # httptools either way (``http="auto"`` picks it, installed); this keeps the access
        # log and no graceful-shutdown bound. Under server_config test_price_stream_one_reader
        # once found its shared read still blocked 30 s after its 200 streams' clients left;
        # session 11 did not reproduce that in any of ~40 runs of 200-500 streams (h11 and
        # httptools, asyncio and uvloop, in-process and as ``python -m``): the feed stopped
        # within 1.1 s each time.
        server = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=settings.http_port, log_config=None, lifespan="off"
            )
        )
        async with started(runtime, wiring):
            task = asyncio.create_task(server.serve())
            while not server.started:  # uvicorn exposes only a flag
                if task.done():  # it could not bind (uvicorn exits): say so, do not wait
                    raise RuntimeError(f"{spec.name} did not start serving") from task.exception()
                await asyncio.sleep(0.05)
            try:
                yield Running(f"http://127.0.0.1:{settings.http_port}", settings)
            finally:
                server.should_exit = True
                await task
    finally:
        await runtime.close()


class Subscription(NamedTuple):
    """One topic a service reads: its registry name, and the consumer group it reads it in
    (None: read whole by every instance, without a group)."""

    topic: str
    group: str | None


async def subscriptions(spec: ServiceSpec, base: GpuxSettings) -> list[Subscription]:
    """What ``spec`` subscribes to once wired, as ``python -m`` would wire it (its runtime is
    opened and closed again; nothing is consumed), without the session's namespace."""
    settings = service_settings(spec, base)
    runtime = await open_runtime(spec, settings)
    try:
        wiring = await spec.wire(runtime)
    finally:
        await runtime.close()
    found = []
    for router in wiring.routers:
        for subscriber in router.subscribers:
            assert isinstance(subscriber, LogicSubscriber), subscriber  # a Kafka router's
            group = subscriber.group_id
            for topic in subscriber.topic_names:
                found.append(
                    Subscription(
                        topic.removeprefix(settings.namespace),
                        None if group is None else group.removeprefix(settings.namespace),
                    )
                )
    return found


IN_TESTS: Mapping[str, Mapping[str, Any]] = {
    # Offers and orders expire within a test, not within the production interval.
    "matching": {"expiry_interval_s": 0.2},
    # Buyers top up without a payment provider.
    "billing": {"dev_topups": True},
    # Every account of a test signs up from the same address.
    "gateway": {"anonymous_rate_limit": "10000/minute"},
}
"""The settings a ``stack`` gives each service by name, beside the session's endpoints."""


@contextlib.asynccontextmanager
async def stack(
    base: GpuxSettings,
    *specs: ServiceSpec,
    overrides: Mapping[str, Mapping[str, Any]] = IN_TESTS,
    tracer_provider: Callable[[ServiceSpec], TracerProvider] | None = None,
) -> AsyncIterator[dict[str, Running]]:
    """Start ``specs`` in this order (each with its ``overrides`` by service name, and a
    tracer provider of ``tracer_provider(spec)``'s when given); yield them by name."""
    async with contextlib.AsyncExitStack() as services:
        served: dict[str, Running] = {}
        for spec in specs:
            served[spec.name] = await services.enter_async_context(
                running(
                    spec,
                    base,
                    tracer_provider=None if tracer_provider is None else tracer_provider(spec),
                    **overrides.get(spec.name, {}),
                )
            )
        yield served


@contextlib.asynccontextmanager
async def chain_at_speed(
    base: GpuxSettings, *specs: ServiceSpec, speed: float, gateway: Mapping[str, Any] | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """Start ``specs`` (a whole chain, the gateway among them) on a clock ``speed`` times the
    wall clock's from now, billing settling every 0.1 s and the gateway with ``gateway``
    beside ``IN_TESTS``; a client of the gateway."""
    settings = base.model_copy(update={"clock_speed": speed, "clock_epoch": datetime.now(UTC)})
    overrides = {
        **IN_TESTS,
        "billing": {**IN_TESTS["billing"], "settle_tick_s": 0.1},
        "gateway": {**IN_TESTS["gateway"], **(gateway or {})},
    }
    async with (
        stack(settings, *specs, overrides=overrides) as served,
        served["gateway"].client() as client,
    ):
        yield client
