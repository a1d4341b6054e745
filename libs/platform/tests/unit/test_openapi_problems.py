"""Each operation documents the problems it can answer, and only those: the 422 of its inputs,
what reading its body can refuse, the service's rules and the route's own, each a problem+json
answer with its reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI
from pydantic import BaseModel

from gpux_platform.openapi import Answer, Operation, describe, install_openapi
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, install_problem_handlers

pytestmark = pytest.mark.unit

PROBLEM = {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}


class Body(BaseModel):
    n: int


async def caller() -> str:
    """Stands for an authenticating dependency."""
    return "someone"


def authenticated(operation: Operation) -> Iterator[Answer]:
    """A service's rule: what its authenticating dependency refuses."""
    if caller in operation.calls:
        yield 401, "No key"


def addressed(operation: Operation) -> Iterator[Answer]:
    """A service's rule: the thing a path names."""
    for name in operation.path_params:
        yield 404, f"No thing with this {name}"


def _app() -> FastAPI:
    app = FastAPI()
    install_problem_handlers(app)
    install_openapi(app, (authenticated, addressed))
    router = APIRouter(prefix="/things", dependencies=[Depends(caller)])

    @router.post("", responses={409: {"description": "Taken"}})
    async def create_thing(body: Body) -> Body:
        return body

    @router.get("/{thing_id}")
    async def get_thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    app.include_router(router)

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    return app


def _errors(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    responses = document["paths"][path][method]["responses"]
    return {status: answer for status, answer in responses.items() if int(status) >= 400}


def test_each_operation_lists_only_what_it_can_answer() -> None:
    document = _app().openapi()
    # Every operation may fail unexpectedly (500); beyond that, only what it can answer.
    assert set(_errors(document, "/ping", "get")) == {"500"}
    assert set(_errors(document, "/things", "post")) == {"400", "401", "409", "415", "422", "500"}
    assert set(_errors(document, "/things/{thing_id}", "get")) == {"401", "404", "422", "500"}


def test_every_answer_is_a_problem_with_its_reason() -> None:
    document = _app().openapi()
    created = _errors(document, "/things", "post")
    assert all(answer["content"] == PROBLEM for answer in created.values())
    assert created["409"]["description"] == "Taken"
    assert created["415"]["description"] == "The body is not `application/json`"
    assert created["422"]["description"].startswith("The body does not validate")
    read = _errors(document, "/things/{thing_id}", "get")
    assert read["404"]["description"] == "No thing with this thing_id"
    assert read["422"]["description"].startswith("`thing_id` does not validate")
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert "Problem" in document["components"]["schemas"]


def test_a_declared_answer_keeps_its_reason_first_beside_those_of_the_rules() -> None:
    assert describe(["The order is final"]) == "The order is final"
    merged = describe(["The order is final.", "No key"])
    assert merged == "The order is final. No key."


async def test_a_body_of_another_media_type_is_415_and_a_bad_one_422() -> None:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        typed = await client.post(
            "/things", content=b'{"n": 1}', headers={"Content-Type": "text/plain"}
        )
        untyped = await client.post("/things", content=b'{"n": 1}')
        wrong = await client.post("/things", json={"n": "x"})
        fine = await client.post("/things", json={"n": 1})
    assert (typed.status_code, untyped.status_code) == (415, 415)
    assert typed.headers["content-type"] == PROBLEM_MEDIA_TYPE
    assert typed.json()["type"].endswith("/unsupported-media-type")
    assert wrong.status_code == 422
    assert fine.status_code == 200
