"""An unexpected error of a route is answered 500 problem+json inside the app's middleware:
CORS headers are on it, the request's histogram counts it, and it is logged once, with its
traceback and the request's id; an error after the response started is raised on."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import StreamingResponse
from opentelemetry.sdk.trace import TracerProvider

from gpux_devinfra.testing.logs import kept
from gpux_platform.metrics import HTTP_SECONDS
from gpux_platform.problems import PROBLEM_MEDIA_TYPE
from gpux_platform.request_ids import HEADER
from gpux_platform.service import Runtime, ServiceSpec, Wiring, build_app
from gpux_platform.settings import GpuxSettings

pytestmark = pytest.mark.unit

ORIGIN = "https://web.example"


async def _no_wiring(_: Runtime) -> Wiring:
    return Wiring()


def _cors(app: FastAPI) -> None:
    app.add_middleware(CORSMiddleware, allow_origins=[ORIGIN])


def _app() -> FastAPI:
    router = APIRouter()

    @router.get("/broken")
    async def broken() -> None:
        raise RuntimeError("boom")

    @router.get("/half")
    async def half() -> StreamingResponse:
        async def lines() -> AsyncIterator[bytes]:
            yield b"one\n"
            raise RuntimeError("mid-answer")

        return StreamingResponse(lines())

    @router.get("/fine")
    async def fine() -> dict[str, bool]:
        return {"ok": True}

    untouched = cast(Any, None)
    runtime = Runtime("things", untouched, untouched, untouched, untouched, TracerProvider())
    spec = ServiceSpec("things", GpuxSettings, _no_wiring)
    return build_app(spec, runtime, Wiring(http=[router], configure_app=_cors))


def _count(status: str) -> float:
    for metric in HTTP_SECONDS.collect():
        for sample in metric.samples:
            labels = sample.labels
            if (
                sample.name.endswith("_count")
                and labels["route"] == "/broken"
                and labels["status"] == status
            ):
                return sample.value
    return 0.0


async def test_a_500_carries_cors_headers_the_problem_and_is_counted() -> None:
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=False)
    before = _count("500")
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.get("/broken", headers={"Origin": ORIGIN, HEADER: "req-500"})
        fine = await client.get("/fine", headers={"Origin": ORIGIN})
    assert answer.status_code == 500
    assert answer.headers["access-control-allow-origin"] == ORIGIN
    assert answer.headers["content-type"] == PROBLEM_MEDIA_TYPE
    assert answer.headers[HEADER] == "req-500"
    body = answer.json()
    assert body["type"].endswith("/internal-error")
    assert body["request_id"] == "req-500"
    assert body["instance"] == "/broken"
    assert "boom" not in answer.text  # the error's text stays in the log
    assert _count("500") == before + 1
    assert fine.status_code == 200
    assert fine.headers["access-control-allow-origin"] == ORIGIN


@pytest.fixture
def logged() -> Iterator[list[logging.LogRecord]]:
    """What ``gpux.http`` writes, through the platform's filter (as ``setup_logging``)."""
    with kept(logging.getLogger("gpux.http")) as records:
        yield records


async def test_the_error_is_logged_once_with_the_request_id_and_not_raised_on(
    logged: list[logging.LogRecord],
) -> None:
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=True)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.get("/broken", headers={HEADER: "req-log"})
    assert answer.status_code == 500
    assert [(r.levelname, getattr(r, "request_id", None)) for r in logged] == [("ERROR", "req-log")]
    assert logged[0].exc_info is not None
    assert "boom" in str(logged[0].exc_info[1])


async def test_an_error_after_the_answer_started_is_raised_on() -> None:
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=True)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with pytest.raises(RuntimeError, match="mid-answer"):
            await client.get("/half")
