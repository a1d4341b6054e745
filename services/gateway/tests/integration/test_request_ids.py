"""The served gateway answers every request with its ``X-Request-Id`` (the caller's, when it
sent a usable one), also those its own middleware refuses, repeats it in problems, and lets a
browser of an allowed origin send it and read it (CORS)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gpux_platform.settings import GpuxSettings

from .conftest import RunningGateway, serving

ORIGIN = "https://app.example"
HEADER = "X-Request-Id"


@pytest.fixture(scope="module")
async def gateway_for_browsers(module_settings: GpuxSettings) -> AsyncIterator[RunningGateway]:
    async with serving(module_settings, cors_origins=[ORIGIN], max_body_bytes=4096) as served:
        yield served


async def test_answers_and_refusals_carry_the_request_id(
    gateway_for_browsers: RunningGateway,
) -> None:
    async with gateway_for_browsers.client() as client:
        ready = await client.get("/readyz")
        refused = await client.get("/v1/accounts/me", headers={HEADER: "trace-me-42"})
        too_large = await client.post(
            "/v1/accounts",
            content=b'{"name": "' + b"x" * 5000 + b'", "roles": ["buyer"]}',
            headers={"Content-Type": "application/json", HEADER: "big-1"},
        )
    assert ready.headers[HEADER]
    assert (refused.status_code, refused.headers[HEADER]) == (401, "trace-me-42")
    assert refused.json()["request_id"] == "trace-me-42"
    assert (too_large.status_code, too_large.headers[HEADER]) == (413, "big-1")
    assert too_large.json()["request_id"] == "big-1"


async def test_a_browser_may_send_and_read_the_request_id(
    gateway_for_browsers: RunningGateway,
) -> None:
    async with gateway_for_browsers.client() as client:
        preflight = await client.options(
            "/v1/accounts/me",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": HEADER,
            },
        )
        read = await client.get("/healthz", headers={"Origin": ORIGIN, HEADER: "from-the-page"})
    assert preflight.status_code == 200
    assert HEADER.lower() in preflight.headers["access-control-allow-headers"].lower()
    assert preflight.headers[HEADER]
    exposed = read.headers["access-control-expose-headers"].lower()
    assert HEADER.lower() in exposed
    assert read.headers[HEADER] == "from-the-page"
