"""The gateway's HTTP app: its routers, in order, and its middleware.

The platform's app (``gpux_platform.service.build_app``) adds health, metrics and the
problem+json handlers; ``configure`` adds the body size limit and CORS and keeps the
``Gateway`` and the price stream's feed on the app for the endpoints' dependencies.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gpux_gateway.accounts.endpoints import router as accounts
from gpux_gateway.admin.endpoints import router as admin
from gpux_gateway.catalog.endpoints import router as catalog
from gpux_gateway.domain.sessions import CSRF_HEADER
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.entrypoints.write_door import WriteDoor
from gpux_gateway.keys.endpoints import router as keys
from gpux_gateway.leases.endpoints import router as leases
from gpux_gateway.market.endpoints import router as market
from gpux_gateway.notifications.endpoints import router as account_events
from gpux_gateway.notifications.feed import AccountEventsFeed
from gpux_gateway.offers.endpoints import router as offers
from gpux_gateway.orders.endpoints import router as orders
from gpux_gateway.payouts.endpoints import router as payouts
from gpux_gateway.sessions.endpoints import router as sessions
from gpux_gateway.ssh_keys.endpoints import router as ssh_keys
from gpux_gateway.streams.endpoints import router as streams
from gpux_gateway.streams.feed import PriceFeed
from gpux_gateway.wallets.endpoints import router as wallets
from gpux_gateway.webapp import mount as mount_web_app
from gpux_gateway.webhooks.endpoints import router as webhooks
from gpux_platform import request_ids
from gpux_platform.asgi import HttpMiddleware, TrackedSend
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE, Problem

ROUTERS: tuple[APIRouter, ...] = (
    accounts,
    sessions,
    keys,
    ssh_keys,
    offers,
    orders,
    admin,
    streams,
    account_events,
    catalog,
    market,
    wallets,
    leases,
    payouts,
    webhooks,
)
"""Every resource's routes, in the order the OpenAPI document lists them."""


def configure(
    app: FastAPI, gw: Gateway, prices: PriceFeed, account_events: AccountEventsFeed
) -> None:
    """Keep the gateway, the price feed and the account events' feed on the app; middleware:
    the door of writes, body size limit, CORS for browser frontends."""
    app.state.gateway = gw
    app.state.price_feed = prices
    app.state.account_events = account_events
    # Innermost of these three: a write refused for overload is answered before its body
    # is read, with CORS headers still added by the outer middleware.
    app.add_middleware(WriteDoor, gate=gw.writes)
    app.add_middleware(BodyLimitMiddleware, max_bytes=gw.settings.max_body_bytes)
    if gw.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=gw.settings.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Idempotency-Key",
                "Last-Event-ID",
                request_ids.HEADER,
                CSRF_HEADER,
            ],
            expose_headers=[
                "RateLimit-Limit",
                "RateLimit-Remaining",
                "RateLimit-Reset",
                request_ids.HEADER,
            ],
        )
    mount_web_app(app)  # last: it answers only the GETs no API route matched


class BodyLimitMiddleware(HttpMiddleware):
    """ASGI middleware: at most ``max_bytes`` of request body (declared or streamed), else 413.

    The limit applies when the body is read: an operation that takes no body (every GET,
    DELETE and body-less POST) never reads one, so it answers as usual whatever a client
    declares (its OpenAPI entry lists no 413). Once the response has started, what reads on
    is a disconnect listener (a stream's, a file's), which throws the body away: it reads
    unlimited, so a stream is not cut by what its request declared.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, refused once its body, read, is over the limit."""
        declared = dict(scope.get("headers", [])).get(b"content-length")
        too_large = declared is not None and (
            not declared.isdigit() or int(declared) > self.max_bytes
        )
        seen = 0
        tracked = TrackedSend(send)

        async def limited() -> Message:
            nonlocal seen
            if tracked.started:
                return await receive()
            if too_large:  # refused before a byte of it is read
                raise _TooLarge(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge(self.max_bytes)
            return message

        try:
            await self.app(scope, limited, tracked)
        except _TooLarge:
            if tracked.started:
                raise
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        body = (
            Problem(
                type=TYPE_BASE + "payload-too-large",
                title="Payload too large",
                status=413,
                detail=f"request bodies are limited to {self.max_bytes} bytes",
                instance=scope.get("path", ""),
                request_id=request_ids.current(),
            )
            .model_dump_json(exclude_none=True)
            .encode()
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(StarletteHTTPException):
    """A streamed body went over the limit. An HTTP exception, so that FastAPI, reading the
    body, passes it on as it is (any other exception there becomes a 400) and the problem
    handlers answer it 413."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request bodies are limited to {max_bytes} bytes")
