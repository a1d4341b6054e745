"""The HTTP side of idempotent creation: the Idempotency-Key header, a request's ``Once``,
and the answer, replayed or not (``domain.idempotency`` holds the rule,
``service.idempotency`` runs it in the request's unit of work)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from gpux_gateway.domain.idempotency import PATTERN, Once, Outcome, fingerprint, is_usable_key
from gpux_gateway.entrypoints.dependencies import RATE_LIMIT_HEADERS, GatewayDep
from gpux_platform.problems import ProblemError

HEADER = "Idempotency-Key"

IdemKey = Annotated[
    str | None,
    Header(
        alias=HEADER,
        pattern=PATTERN,
        description="Makes a retried POST safe: 1 to 255 visible ASCII characters.",
    ),
]
"""The optional Idempotency-Key header of a creating request."""


def check_key(key: str | None) -> str | None:
    """The header's value if it is a usable key (1 to 255 visible ASCII characters)."""
    if key is None:
        return None
    if not is_usable_key(key):
        raise ProblemError(
            400,
            "bad-idempotency-key",
            "Bad Idempotency-Key",
            "use 1 to 255 visible ASCII characters",
        )
    return key


def once_for(
    request: Request, body: BaseModel, *, scope: str, key: str | None, ttl: timedelta
) -> Once:
    """The idempotency of a request: its key in ``scope`` and the fingerprint of its body."""
    print_ = fingerprint(request.method, request.url.path, body.model_dump_json())
    return Once(scope=scope, key=key, fingerprint=print_, ttl=ttl)


def answer(
    outcome: Outcome,
    reveal: dict[str, Any] | None = None,
    *,
    extra_headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The HTTP answer of a creating request (``Idempotent-Replayed`` on a replay).

    ``reveal`` holds fields added to a successful response each time it is sent but never
    stored (a new API key's secret); ``extra_headers`` go out with it (the rate limit's).
    """
    headers = dict(extra_headers or {})
    if outcome.replayed:
        headers["Idempotent-Replayed"] = "true"
    content = outcome.body
    if reveal and 200 <= outcome.status_code < 300:
        content = {**reveal, **content}
    return JSONResponse(content, status_code=outcome.status_code, headers=headers)


@dataclass(frozen=True)
class Idempotency:
    """A creating request's Idempotency-Key, checked when first used, and its fingerprint."""

    request: Request
    header: str | None
    ttl: timedelta

    def key(self) -> str | None:
        """The key, if the request sent a usable one (400 problem if it is not)."""
        return check_key(self.header)

    def once(self, body: BaseModel, *, scope: str) -> Once:
        """The request's ``Once`` in ``scope``: its key and the fingerprint of ``body``."""
        return once_for(self.request, body, scope=scope, key=self.key(), ttl=self.ttl)

    def answer(self, outcome: Outcome, reveal: dict[str, Any] | None = None) -> JSONResponse:
        """The request's answer (``answer``), with its rate limit's ``RateLimit-*`` headers."""
        limit = getattr(self.request.state, RATE_LIMIT_HEADERS, None)
        return answer(outcome, reveal, extra_headers=limit)


async def idempotency(
    request: Request, gw: GatewayDep, idempotency_key: IdemKey = None
) -> Idempotency:
    """The dependency of a creating route: the Idempotency-Key header, documented once."""
    return Idempotency(request, idempotency_key, gw.idempotency_ttl)


IdempotencyDep = Annotated[Idempotency, Depends(idempotency)]
