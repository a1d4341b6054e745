"""The gateway served by uvicorn in this process, against the session's real infrastructure."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from pydantic import SecretStr

from gpux_gateway.bootstrap import SPEC
from gpux_gateway.config import GatewaySettings
from gpux_platform.service import build_app, open_runtime, started
from gpux_platform.settings import GpuxSettings

ADMIN_KEY = "admin-key-for-tests-0123456789abcdef"


@dataclass
class RunningGateway:
    """A gateway under test: its URL and settings."""

    url: str
    settings: GatewaySettings

    def client(self, key: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
async def gateway(gpux_settings: GpuxSettings) -> AsyncIterator[RunningGateway]:
    port = _free_port()
    settings = GatewaySettings(
        **{
            **gpux_settings.model_dump(),
            "database_url": gpux_settings.database_url,
            "http_port": port,
            "admin_key": SecretStr(ADMIN_KEY),
            "rate_limit": "100/minute",
            "anonymous_rate_limit": "10000/minute",
            "max_body_bytes": 65536,
        }
    )
    runtime = await open_runtime(SPEC, settings)
    wiring = await SPEC.wire(runtime)
    app = build_app(SPEC, runtime, wiring)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    async with started(runtime, wiring):
        task = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes only a flag
            await asyncio.sleep(0.05)
        try:
            yield RunningGateway(f"http://127.0.0.1:{port}", settings)
        finally:
            server.should_exit = True
            await task
    await runtime.close()


SignUp = Callable[[list[str]], Awaitable[dict[str, str]]]


@pytest.fixture
def sign_up(gateway: RunningGateway) -> SignUp:
    """Sign a new account up; returns its id, key and key id."""

    async def create(roles: list[str]) -> dict[str, str]:
        async with gateway.client() as client:
            response = await client.post("/v1/accounts", json={"name": "acme", "roles": roles})
        assert response.status_code == 201, response.text
        body = response.json()
        return {"id": body["account"]["id"], "key": body["api_key"], "key_id": body["key"]["id"]}

    return create


OFFER = {
    "gpu": "rtx-4090",
    "gpus": 4,
    "price_per_gpu_hour": "0.3300",
    "currency": "USD",
    "tier": "on_demand",
    "billing": "second",
}


@pytest.fixture
def offer_body() -> dict[str, object]:
    """A valid offer."""
    return dict(OFFER)
