"""The gateway's HTTP app and OpenAPI document as ``web/scripts/openapi.py`` builds them:
``build_app`` with the gateway's routers, on stores that are never touched."""

from __future__ import annotations

import functools
from typing import Any, cast

from fastapi import FastAPI
from opentelemetry.sdk.trace import TracerProvider

from gpux_gateway.bootstrap import SPEC
from gpux_gateway.entrypoints import http
from gpux_platform.service import Runtime, Wiring, build_app


@functools.cache
def gateway_app() -> FastAPI:
    """The app (built once: building the document reads every route)."""
    untouched = cast(Any, None)
    runtime = Runtime("gateway", untouched, untouched, untouched, untouched, TracerProvider())
    return build_app(SPEC, runtime, Wiring(http=list(http.ROUTERS)))


def document() -> dict[str, Any]:
    """The OpenAPI document the gateway serves."""
    return gateway_app().openapi()


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    """Every operation: method, path template, its entry in the document."""
    return [
        (method.upper(), path, operation)
        for path, item in document()["paths"].items()
        for method, operation in item.items()
    ]
