"""The gateway served by uvicorn in this process, against the session's real infrastructure."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from gpux_contracts.topics import Topic
from gpux_devinfra.testing.kafka import published
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC
from gpux_gateway.config import GatewaySettings
from gpux_platform.broker import Outgoing, make_broker, publish_many
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


@contextlib.asynccontextmanager
async def serving(base: GpuxSettings, **overrides: Any) -> AsyncIterator[RunningGateway]:
    """A gateway served in this process on ``base`` with the tests' ``ADMIN_KEY`` and the
    settings' ``overrides``."""
    async with running(SPEC, base, admin_key=SecretStr(ADMIN_KEY), **overrides) as (
        url,
        settings,
    ):
        assert isinstance(settings, GatewaySettings)
        yield RunningGateway(url, settings)


@pytest.fixture(scope="session")
async def gateway(gpux_settings: GpuxSettings) -> AsyncIterator[RunningGateway]:
    async with serving(
        gpux_settings,
        rate_limit="100/minute",
        anonymous_rate_limit="10000/minute",
        max_body_bytes=65536,
    ) as served:
        yield served


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


Parties = tuple[dict[str, str], dict[str, str], dict[str, str]]


@pytest.fixture
async def parties(sign_up: SignUp) -> Parties:
    """A lease's buyer and seller to be, and an account that is both but party to neither's
    lease (signed up in that order)."""
    return await sign_up(["buyer"]), await sign_up(["seller"]), await sign_up(["buyer", "seller"])


OFFER = {
    "gpu": "rtx-4090",
    "gpus": 4,
    "price_per_gpu_hour": "0.3300",
    "currency": "USD",
    "tier": "on_demand",
    "billing": "second",
}


ORDER: dict[str, Any] = {
    "gpu": "rtx-4090",
    "gpus": 8,
    "type": "limit",
    "max_price_per_gpu_hour": "0.4500",
    "currency": "EUR",
    "tier": "on_demand",
    "hours": 24,
}
"""A valid limit order."""


@pytest.fixture
def offer_body() -> dict[str, object]:
    """A valid offer."""
    return dict(OFFER)


async def commands_about(
    gateway: RunningGateway, topic: Topic, field: str, value: str, settle_s: float
) -> list[dict[str, Any]]:
    """Every record the gateway published on ``topic`` whose payload's ``field`` is ``value``
    (once none arrived for ``settle_s``)."""
    found = await published(
        gateway.settings, topic, lambda body: body["payload"].get(field) == value, settle_s=settle_s
    )
    return [record.body for record in found]


async def publish_as(gateway: RunningGateway, producer: str, messages: list[Outgoing]) -> None:
    """Publish ``messages`` as the ``producer`` service does, on a broker of its own."""
    broker = make_broker(gateway.settings, producer)
    await broker.start()
    try:
        await publish_many(broker, gateway.settings, messages)
    finally:
        await broker.stop()
