"""Request bodies over the limit are refused 413, whether declared or streamed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel
from sse_starlette.sse import EventSourceResponse
from starlette.types import Message

from gpux_gateway.entrypoints.http import BodyLimitMiddleware
from gpux_platform.problems import install_problem_handlers

pytestmark = pytest.mark.unit

LIMIT = 64


class Note(BaseModel):
    text: str


def _app() -> FastAPI:
    app = FastAPI()
    install_problem_handlers(app)

    @app.post("/notes")
    async def create_note(note: Note) -> Note:
        return note

    app.add_middleware(BodyLimitMiddleware, max_bytes=LIMIT)
    return app


async def _chunks(total: int) -> AsyncIterator[bytes]:
    body = ('{"text": "' + "x" * total + '"}').encode()
    for start in range(0, len(body), 16):
        yield body[start : start + 16]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


async def test_a_streamed_body_over_the_limit_is_a_413(client: httpx.AsyncClient) -> None:
    headers = {"content-type": "application/json"}
    answer = await client.post("/notes", content=_chunks(200), headers=headers)
    assert answer.status_code == 413
    assert answer.json()["type"].endswith("/payload-too-large")
    small = await client.post("/notes", content=_chunks(10), headers=headers)
    assert small.status_code == 200
    assert small.json() == {"text": "x" * 10}


async def test_a_declared_body_over_the_limit_is_a_413(client: httpx.AsyncClient) -> None:
    answer = await client.post("/notes", json={"text": "x" * 200})
    assert answer.status_code == 413
    assert answer.json()["type"].endswith("/payload-too-large")


async def test_an_operation_that_reads_no_body_answers_whatever_is_declared() -> None:
    app = _app()

    @app.get("/notes/{note_id}")
    async def get_note(note_id: str) -> Note:
        return Note(text=note_id)

    @app.post("/notes/{note_id}/pin")
    async def pin_note(note_id: str) -> Note:
        return Note(text=f"pinned {note_id}")

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        read = await client.request("GET", "/notes/n1", content=b"x" * 200)
        pinned = await client.post("/notes/n1/pin", content=b"x" * 200)
        declared = await client.get("/notes/n2", headers={"content-length": "not-a-number"})
    assert (read.status_code, read.json()) == (200, {"text": "n1"})
    assert (pinned.status_code, pinned.json()) == (200, {"text": "pinned n1"})
    assert declared.status_code == 200


async def test_a_stream_is_not_cut_by_the_body_its_request_declared() -> None:
    """Once a stream's response started, its disconnect listener reads the request: a body
    over the limit that the GET declared and sent is read unlimited and thrown away."""
    app = _app()

    @app.get("/events")
    async def events() -> EventSourceResponse:
        async def two() -> AsyncIterator[dict[str, str]]:
            for n in ("1", "2"):
                yield {"id": n, "data": n}
                await asyncio.sleep(0)

        return EventSourceResponse(two())

    sent: list[Message] = []
    messages = [{"type": "http.request", "body": b"x" * 200, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # no disconnect: the stream ends by itself
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/events",
        "raw_path": b"/events",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"t"), (b"content-length", b"200")],
        "client": ("127.0.0.1", 1),
        "server": ("t", 80),
    }
    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    assert sent[0]["status"] == 200
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert b"data: 1" in body
    assert b"data: 2" in body
    assert not messages  # the listener did read the declared body
