"""Every request body and every JSON success of the gateway's OpenAPI document shows an
example, and each example is real: a request's validates as its body model (which refuses
unknown fields), a response's is exactly what its response model writes back, so an example
gone stale with its model fails here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import TypeAdapter

from ..openapi_document import document, gateway_app, operations

pytestmark = pytest.mark.unit

JSON = "application/json"


def shown(schema: dict[str, Any]) -> list[Any]:
    """The examples a documented schema shows: its own, its component's, or (a oneOf) each
    variant's."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return shown(document()["components"]["schemas"][name])
    variants = schema.get("oneOf") or schema.get("anyOf")
    if variants and "examples" not in schema:
        return [example for variant in variants for example in shown(variant)]
    return list(schema.get("examples", []))


def media(content: dict[str, Any]) -> list[Any]:
    """The examples of one media type: its own, else its schema's."""
    own = [e["value"] for e in content.get("examples", {}).values()]
    own += [content["example"]] if "example" in content else []
    return own or shown(content.get("schema", {}))


def bodies() -> Iterator[tuple[str, TypeAdapter[Any], list[Any]]]:
    """Each route's request body model and the examples documented for it."""
    for context in iter_route_contexts(gateway_app().routes):
        if isinstance(context.original_route, APIRoute) and context.body_field is not None:
            for method in context.methods or ():
                request = document()["paths"][context.path_format][method.lower()]
                field = context.body_field.field_info
                yield (
                    f"{method} {context.path_format}",
                    TypeAdapter(field.annotation),
                    media(request["requestBody"]["content"][JSON]),
                )


def answers() -> Iterator[tuple[str, TypeAdapter[Any], list[Any]]]:
    """Each route's JSON success model and the examples documented for it."""
    for context in iter_route_contexts(gateway_app().routes):
        if isinstance(context.original_route, APIRoute) and context.response_model is not None:
            for method in context.methods or ():
                operation = document()["paths"][context.path_format][method.lower()]
                success = operation["responses"][str(context.status_code or 200)]
                yield (
                    f"{method} {context.path_format}",
                    TypeAdapter(context.response_model),
                    media(success["content"][JSON]),
                )


def test_every_request_body_and_json_success_shows_an_example() -> None:
    missing = []
    for method, path, operation in operations():
        contents = [operation.get("requestBody", {}).get("content", {})] + [
            answer.get("content", {})
            for status, answer in operation["responses"].items()
            if status.startswith("2")
        ]
        missing += [f"{method} {path}" for c in contents if JSON in c and not media(c[JSON])]
    assert missing == []


def test_each_request_example_is_a_valid_body() -> None:
    checked = 0
    for operation, body, examples in bodies():
        for example in examples:
            assert body.validate_python(example) is not None, operation
            checked += 1
    assert checked >= 20


def test_each_response_example_is_what_its_model_writes() -> None:
    checked = 0
    for operation, model, examples in answers():
        for example in examples:
            written = model.dump_python(model.validate_python(example), mode="json")
            assert written == example, operation
            checked += 1
    assert checked >= 40
