"""The OpenAPI document a service serves: each operation with the problems it can answer.

FastAPI documents an operation's success and its own shape of 422; here every operation gets
the problem+json answers it can give, and only those, each saying why it would be given.
They are read from each operation by rules (``ProblemRule``): the platform's (the inputs it
validates, the body it reads) and the service's own (``ServiceSpec.problems``: who is calling,
rate limits, the resource a path addresses...), merged with the answers a route declares
itself (``responses=``), so a generated client knows which errors each call can meet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from pydantic import TypeAdapter

from gpux_platform import request_ids
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, Problem

Answer = tuple[int, str]
"""A problem an operation can answer: its status and why it would be answered."""


@dataclass(frozen=True)
class Operation:
    """One method of one route, as the problem rules read it."""

    method: str
    """``GET``, ``POST``..."""
    path: str
    """The path template: ``/v1/offers/{offer_id}``."""
    path_params: tuple[str, ...]
    """The names of the path's parameters, in order."""
    has_body: bool
    """Whether it reads a JSON body."""
    calls: frozenset[Callable[..., Any]]
    """Every dependency it runs: its routers', and those of its dependencies."""


ProblemRule = Callable[[Operation], Iterable[Answer]]
"""Which problems an operation can answer, read from the operation: a rule documents every
operation it applies to, so no route can forget it."""

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
REQUEST_ID_REF = {"$ref": f"#/components/headers/{request_ids.HEADER}"}
REQUEST_ID_HEADER = {
    "description": "The request's id: the caller's `X-Request-Id` if it sent one of 1 to 128"
    " visible ASCII characters, else a new one. Every answer carries it, problems also in"
    " `request_id`, and every log line written while serving the request names it.",
    "schema": {"type": "string", "pattern": request_ids.PATTERN},
}
_FASTAPI_422 = "#/components/schemas/HTTPValidationError"


def problem_content() -> dict[str, Any]:
    """The ``content`` of a problem answer in the document."""
    return {PROBLEM_MEDIA_TYPE: {"schema": dict(PROBLEM_REF)}}


def _calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)


def body_problems(operation: Operation) -> Iterator[Answer]:
    """What reading a JSON body can refuse (``problems.install_problem_handlers``)."""
    if operation.has_body:
        yield 400, "The body is not UTF-8 text"
        yield 415, "The body is not `application/json`"


def unexpected(operation: Operation) -> Iterator[Answer]:
    """Every operation may fail unexpectedly: a 500 ``internal-error`` (logged with its
    ``X-Request-Id``, which the answer carries too)."""
    yield 500, "An unexpected error; it was logged under the answer's `X-Request-Id`."


PLATFORM_RULES: tuple[ProblemRule, ...] = (body_problems, unexpected)
"""The rules every service's document follows; the 422 of inputs is read from the operation."""


def _invalid_inputs(documented: dict[str, Any]) -> Answer | None:
    """The 422 of an operation that takes inputs, naming them (FastAPI validates each)."""
    names = [f"`{p['name']}`" for p in documented.get("parameters", [])]
    if "requestBody" in documented:
        names.insert(0, "the body")
    if not names:
        return None
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return 422, f"{listed[0].upper()}{listed[1:]} does not validate (`errors[]` names each field)"


def describe(causes: Sequence[str]) -> str:
    """One description of several causes of one status: each a sentence."""
    if len(causes) == 1:
        return causes[0]
    return " ".join(cause.rstrip(".") + "." for cause in causes)


def _document(responses: dict[str, Any], answers: Iterable[Answer]) -> dict[str, Any]:
    """``responses`` with each answer's problem: a status the route declared keeps its own
    description first, then the causes the rules found; every error is a ``Problem``, every
    answer has its ``X-Request-Id``, and the answers are in status order."""
    causes: dict[str, list[str]] = {}
    for status, why in answers:
        listed = causes.setdefault(str(status), [])
        if why not in listed:
            listed.append(why)
    for key, whys in causes.items():
        declared = responses.get(key, {}).get("description")
        ordered = [declared, *(w for w in whys if w != declared)] if declared else whys
        responses[key] = {"description": describe(ordered)}
    for key, answer in responses.items():
        if key[:1] in ("4", "5"):  # 404, 4XX, 503...
            answer["content"] = problem_content()
        answer.setdefault("headers", {})[request_ids.HEADER] = dict(REQUEST_ID_REF)
    return dict(sorted(responses.items()))


def _operations(app: FastAPI, schema: dict[str, Any]) -> Iterator[tuple[Operation, dict[str, Any]]]:
    """Each documented operation of the app (its included routers' too) and its entry in
    ``schema``."""
    for context in iter_route_contexts(app.routes):
        if not _documented(context):
            continue
        path = str(context.path_format)
        calls = frozenset(_calls(context.dependant))
        for method in sorted(context.methods or ()):
            documented = schema["paths"][path][method.lower()]
            params = tuple(p["name"] for p in documented.get("parameters", []) if p["in"] == "path")
            has_body = context.body_field is not None
            yield Operation(method, path, params, has_body, calls), documented


def _documented(context: RouteContext) -> bool:
    return isinstance(context.original_route, APIRoute) and bool(context.include_in_schema)


def _models(context: RouteContext) -> Iterator[Any]:
    if context.body_field is not None:
        yield context.body_field.field_info.annotation
    if context.response_model is not None:
        yield context.response_model


def _examples(app: FastAPI) -> dict[str, list[Any]]:
    """The examples of the models the routes read and write (and of the models in them), by
    schema title, as the models state them: the document's encoder drops every null, in
    examples too, and an example without its nulls is no longer what the API answers."""
    found: dict[str, list[Any]] = {}
    for context in iter_route_contexts(app.routes):
        if _documented(context):
            for model in _models(context):
                schema = TypeAdapter(model).json_schema()
                for shown in (schema, *schema.get("$defs", {}).values()):
                    if "examples" in shown and "title" in shown:
                        found.setdefault(shown["title"], shown["examples"])
    return found


def _without_fastapi_422(responses: dict[str, Any]) -> dict[str, Any]:
    content = responses.get("422", {}).get("content", {}).values()
    if any(c.get("schema", {}).get("$ref") == _FASTAPI_422 for c in content):
        return {k: v for k, v in responses.items() if k != "422"}
    return responses


def install_openapi(app: FastAPI, rules: Sequence[ProblemRule] = ()) -> None:
    """Serve the document with each operation's problem answers (``PLATFORM_RULES``, then
    ``rules``) as problem+json whose schema is ``Problem`` (in place of FastAPI's 422 shape),
    the examples as the models state them and the ``X-Request-Id`` of every answer."""
    every_rule = (*PLATFORM_RULES, *rules)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        schema.setdefault("components", {})["headers"] = {request_ids.HEADER: REQUEST_ID_HEADER}
        components = schema["components"].setdefault("schemas", {})
        components["Problem"] = Problem.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
        examples = _examples(app)
        for component in components.values():
            if "examples" in component and component.get("title") in examples:
                component["examples"] = examples[component["title"]]
        for operation, documented in _operations(app, schema):
            invalid = _invalid_inputs(documented)
            answers = [invalid] if invalid else []
            answers += [answer for rule in every_rule for answer in rule(operation)]
            responses = _without_fastapi_422(documented.get("responses", {}))
            documented["responses"] = _document(responses, answers)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
