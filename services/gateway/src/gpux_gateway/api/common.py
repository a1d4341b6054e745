"""Helpers every router uses: idempotent creation, command envelopes, access errors."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id, stable_id
from gpux_gateway import idempotency
from gpux_gateway.context import Gateway
from gpux_gateway.idempotency import Create
from gpux_platform.telemetry import current_trace

PRODUCER = "gateway"


def command_id(scope: str, key: str | None, purpose: str) -> str:
    """A stable id for what a request creates: derived from its Idempotency-Key when it has one."""
    return stable_id(scope, key, purpose) if key else new_id()


def envelope(gw: Gateway, payload: Payload, event_id: str) -> Envelope[Any]:
    """A command envelope from the gateway, in the current trace."""
    return wrap(
        payload,
        producer=PRODUCER,
        occurred_at=gw.clock.now(),
        event_id=event_id,
        correlation_id=event_id,
        trace=current_trace(),
    )


async def create_once(
    gw: Gateway,
    request: Request,
    *,
    scope: str,
    key: str | None,
    body: BaseModel,
    create: Create,
    reveal: dict[str, Any] | None = None,
) -> JSONResponse:
    """Run a creating request once per Idempotency-Key and answer (or replay) its response.

    ``reveal`` holds fields added to a successful response each time it is sent but never
    stored (a new API key's secret).
    """
    outcome = await idempotency.run_once(
        gw.pool,
        scope=scope,
        key=key,
        print_=idempotency.fingerprint(request.method, request.url.path, body.model_dump_json()),
        now=gw.clock.now(),
        ttl=gw.idempotency_ttl,
        create=create,
    )
    headers = {"Idempotent-Replayed": "true"} if outcome.replayed else {}
    content = outcome.body
    if reveal and 200 <= outcome.status_code < 300:
        content = {**reveal, **content}
    return JSONResponse(content, status_code=outcome.status_code, headers=headers)
