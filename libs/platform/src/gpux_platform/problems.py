"""RFC 9457 problem details for every HTTP error gpux answers."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from gpux_platform import request_ids
from gpux_platform.asgi import HttpMiddleware, TrackedSend

log = logging.getLogger("gpux.http")

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "https://gpux.dev/problems/"


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    type: str = Field(description="Stable URI naming the kind of problem.")
    title: str = Field(description="Short summary of the kind of problem.")
    status: int = Field(description="The HTTP status code.")
    detail: str | None = Field(default=None, description="What went wrong this time, for people.")
    instance: str | None = Field(default=None, description="The request path.")
    errors: list[dict[str, Any]] | None = Field(
        default=None, description="Field-level validation errors, when there are any."
    )
    request_id: str | None = Field(
        default=None,
        description="The request's `X-Request-Id` (the caller's, or the one it was given): quote"
        " it when asking about this answer.",
    )


class ProblemError(Exception):
    """Raise to answer with a problem document."""

    def __init__(
        self,
        status: int,
        slug: str,
        title: str,
        detail: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail or title)
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.headers = headers or {}


_TITLES = {
    400: ("bad-request", "Bad request"),
    500: ("internal-error", "Internal error"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    409: ("conflict", "Conflict"),
    413: ("payload-too-large", "Payload too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("validation-error", "Request validation failed"),
    429: ("rate-limited", "Too many requests"),
    503: ("unavailable", "Service unavailable"),
}


def problem_response(
    request: Request,
    status: int,
    slug: str,
    title: str,
    detail: str | None = None,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A problem+json response."""
    body = Problem(
        type=TYPE_BASE + slug,
        title=title,
        status=status,
        detail=detail,
        instance=request.url.path,
        errors=errors,
        request_id=request_ids.of(request.scope),
    )
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _clean(errors: list[Any]) -> list[dict[str, Any]]:
    # Echoing the input back could leak secrets or huge payloads; keep location and message.
    return [
        {
            "loc": [str(p) for p in e.get("loc", ())],
            "msg": str(e.get("msg", "")),
            "type": e.get("type"),
        }
        for e in errors
    ]


def _unread_body(errors: list[Any]) -> bool:
    # FastAPI hands a body it did not read as JSON (another Content-Type, or none) to
    # validation as raw bytes: the client sent the wrong media type, not a wrong field.
    return any(
        tuple(e.get("loc", ())) == ("body",) and isinstance(e.get("input"), bytes) for e in errors
    )


def unexpected_response(request: Request) -> JSONResponse:
    """The 500 problem of an unexpected error, with the request's ``X-Request-Id`` (read from
    the scope's state: it may be answered outside the middleware that adds the header)."""
    request_id = request_ids.of(request.scope)
    return problem_response(
        request,
        500,
        "internal-error",
        "Internal error",
        "an unexpected error; it was logged",
        headers={request_ids.HEADER: request_id} if request_id else None,
    )


class Unexpected(HttpMiddleware):
    """ASGI middleware, the innermost: an unexpected error of a route is logged (with the
    request's id, and on its span) and answered here, 500 problem+json, so that the app's
    middleware (CORS headers, the request's metrics) sees the answer.

    Starlette answers an error that reaches it in its outermost middleware, outside all of
    the app's: a browser would be shown a CORS failure instead of the problem, the request's
    histogram would not count the 500, and the server's log line would not name the request.
    An error after the response started cannot be answered: it is raised on (the server logs
    it and closes the connection).
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request; an error before the response started is answered 500."""
        tracked = TrackedSend(send)
        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if tracked.started:
                raise
            log.exception("unexpected error answering %s %s", scope["method"], scope["path"])
            span = trace.get_current_span()
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            await unexpected_response(Request(scope))(scope, receive, send)


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error (HTTP, validation, unexpected) as problem+json."""

    async def on_problem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ProblemError)
        return problem_response(
            request, exc.status, exc.slug, exc.title, detail=exc.detail, headers=exc.headers
        )

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        slug, title = _TITLES.get(exc.status_code, ("http-error", "HTTP error"))
        detail = exc.detail if isinstance(exc.detail, str) else title
        return problem_response(
            request, exc.status_code, slug, title, detail, headers=dict(exc.headers or {})
        )

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        if _unread_body(list(exc.errors())):
            return problem_response(
                request, 415, *_TITLES[415], "send the body as `application/json`"
            )
        errors = _clean(list(exc.errors()))
        first: dict[str, Any] = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        detail = f"{'.'.join(first['loc'])}: {first['msg']}" if first["loc"] else first["msg"]
        return problem_response(
            request, 422, "validation-error", "Request validation failed", detail, errors=errors
        )

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette's outermost middleware: an error of the app's own middleware (one of a
        # route is answered by ``Unexpected``), answered unless a response started already.
        return unexpected_response(request)

    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(Exception, on_unexpected)
    app.add_middleware(Unexpected)  # the first added: the innermost
