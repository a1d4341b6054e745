"""The door of writes, in front of routing: a write of orders or offers beyond capacity is
refused before anything else is done for it.

The gate (``backpressure.WriteGate``) decides; this middleware only asks it, first thing, for
every POST, PATCH or DELETE under ``/v1/orders`` and ``/v1/offers``: a refused write is
answered a 503 problem with ``Retry-After`` without its body being read, parsed, its key
authenticated or counted, so refusing costs the gateway next to nothing and the writes it
let in are not queued behind a flood of refusals. An admitted write counts as under way until
its answer has been sent.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from gpux_gateway.domain.backpressure import Refusal
from gpux_gateway.entrypoints.backpressure import WriteGate
from gpux_platform import request_ids
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE, Problem

WRITE_PATHS = ("/v1/orders", "/v1/offers")
"""The resources whose writes pass the door."""
READS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_write(method: str, path: str) -> bool:
    """Whether a request writes orders or offers (what the door guards)."""
    return method not in READS and any(path == w or path.startswith(w + "/") for w in WRITE_PATHS)


def refusal_body(refusal: Refusal, path: str) -> bytes:
    """The 503 problem of a refused write, as every problem the gateway answers."""
    problem = Problem(
        type=TYPE_BASE + "overloaded",
        title="Overloaded",
        status=503,
        detail=f"{refusal.detail}: retry later",
        instance=path,
        request_id=request_ids.current(),
    )
    return problem.model_dump_json(exclude_none=True).encode()


class WriteDoor:
    """ASGI middleware: writes of orders and offers through the gate, refusals at once."""

    def __init__(self, app: ASGIApp, gate: WriteGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_write(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        refusal = self.gate.enter()
        if refusal is not None:
            await _refuse(send, refusal, scope["path"])
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.gate.leave()


async def _refuse(send: Send, refusal: Refusal, path: str) -> None:
    body = refusal_body(refusal, path)
    headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(refusal.retry_after_s).encode()),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
