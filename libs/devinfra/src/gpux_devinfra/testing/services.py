"""Run a gpux service inside the test process (uvicorn on a free loopback port)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from opentelemetry.sdk.trace import TracerProvider

from gpux_platform.service import ServiceSpec, build_app, open_runtime, started
from gpux_platform.settings import GpuxSettings


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def running(
    spec: ServiceSpec,
    base: GpuxSettings,
    tracer_provider: TracerProvider | None = None,
    **overrides: Any,
) -> AsyncIterator[tuple[str, GpuxSettings]]:
    """Start a service with the session's endpoints (plus overrides); yield its URL and settings.

    ``tracer_provider`` replaces the one the settings would make, so a test can collect the
    spans of several in-process services (each with its own ``service.name``) in one exporter.
    """
    port = free_port()
    values = {**base.model_dump(), "database_url": base.database_url, "http_port": port}
    settings = spec.settings_type(**{**values, **overrides})
    runtime = await open_runtime(spec, settings, tracer_provider)
    wiring = await spec.wire(runtime)
    app = build_app(spec, runtime, wiring)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    try:
        async with started(runtime, wiring):
            task = asyncio.create_task(server.serve())
            while not server.started:  # noqa: ASYNC110 - uvicorn exposes only a flag
                await asyncio.sleep(0.05)
            try:
                yield f"http://127.0.0.1:{port}", settings
            finally:
                server.should_exit = True
                await task
    finally:
        await runtime.close()
