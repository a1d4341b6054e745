"""Every answer of a service's app carries ``X-Request-Id`` (the caller's when usable, else a
new one), problems repeat it as ``request_id``, every log record written while serving the
request names it, and the document lists it on every answer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from gpux_devinfra.testing.logs import kept
from gpux_platform.problems import ProblemError
from gpux_platform.request_ids import HEADER, chosen, current
from gpux_platform.service import Runtime, ServiceSpec, Wiring, build_app
from gpux_platform.settings import GpuxSettings

pytestmark = pytest.mark.unit

log = logging.getLogger("gpux.test.request_ids")


class Body(BaseModel):
    n: int


async def _no_wiring(_: Runtime) -> Wiring:
    return Wiring()


def _app() -> FastAPI:
    router = APIRouter()

    @router.post("/things")
    async def create_thing(body: Body) -> Body:
        log.info("creating a thing")
        if body.n == 0:
            raise ProblemError(409, "zero", "Zero is taken", "n=0 exists already")
        if body.n == 13:
            raise RuntimeError("boom")
        return body

    untouched = cast(Any, None)
    runtime = Runtime("things", untouched, untouched, untouched, untouched, TracerProvider())
    spec = ServiceSpec("things", GpuxSettings, _no_wiring)
    return build_app(spec, runtime, Wiring(http=[router]))


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    """What the test's logger writes, through the platform's filter (as ``setup_logging``)."""
    with kept(log) as records:
        yield records


async def test_every_answer_carries_a_request_id(client: httpx.AsyncClient) -> None:
    answers = [
        await client.post("/things", json={"n": 1}),
        await client.post("/things", json={"n": "x"}),
        await client.post("/things", json={"n": 0}),
        await client.post("/things", json={"n": 13}),
        await client.get("/nowhere"),
        await client.get("/healthz"),
    ]
    assert [a.status_code for a in answers] == [200, 422, 409, 500, 404, 200]
    ids = [a.headers[HEADER] for a in answers]
    assert len(set(ids)) == len(ids)
    for answer in answers[1:5]:
        assert answer.json()["request_id"] == answer.headers[HEADER]


async def test_a_usable_id_of_the_caller_is_kept_and_any_other_replaced(
    client: httpx.AsyncClient,
) -> None:
    theirs = "edge-7f3a:01JWQXXABRF8P0H4WB1N5VPJMS"
    kept = await client.post("/things", json={"n": 13}, headers={HEADER: theirs})
    assert kept.headers[HEADER] == theirs
    assert kept.json()["request_id"] == theirs
    for unusable in ("", "x" * 129, "two words", "caf\u00e9"):
        answer = await client.get("/healthz", headers={HEADER.encode(): unusable.encode()})
        assert answer.headers[HEADER] not in (unusable, "")
    assert chosen("x" * 128) == "x" * 128
    assert chosen("abc\n") != "abc\n"  # a final newline is no part of a usable id


async def test_log_records_written_while_serving_name_the_request(
    client: httpx.AsyncClient, records: list[logging.LogRecord]
) -> None:
    answer = await client.post("/things", json={"n": 1}, headers={HEADER: "req-1"})
    log.info("between requests")
    assert [(r.getMessage(), getattr(r, "request_id", None)) for r in records] == [
        ("creating a thing", "req-1"),
        ("between requests", None),
    ]
    assert answer.headers[HEADER] == "req-1"


async def test_a_failed_request_leaves_no_id_behind_in_the_callers_context(
    client: httpx.AsyncClient,
) -> None:
    failed = await client.post("/things", json={"n": 13}, headers={HEADER: "req-500"})
    assert failed.status_code == 500
    assert failed.json()["request_id"] == "req-500"
    assert failed.headers[HEADER] == "req-500"
    assert current() is None


def test_the_document_lists_the_header_on_every_answer() -> None:
    document = _app().openapi()
    assert HEADER in document["components"]["headers"]
    ref = {"$ref": f"#/components/headers/{HEADER}"}
    for item in document["paths"].values():
        for operation in item.values():
            for answer in operation["responses"].values():
                assert answer["headers"][HEADER] == ref
    problem = document["components"]["schemas"]["Problem"]
    assert "request_id" in problem["properties"]
