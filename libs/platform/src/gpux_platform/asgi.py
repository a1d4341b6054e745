"""Plain ASGI middleware of HTTP requests, the shape every middleware of ours shares.

Plain ASGI, not Starlette's ``BaseHTTPMiddleware``, which runs every request through an anyio
task group and memory streams. Lifespan (and any other) scopes pass through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpMiddleware:
    """ASGI middleware that acts on HTTP requests only (``http``); anything else goes straight
    to the app it wraps."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request through ``self.app``."""
        raise NotImplementedError


class TrackedSend:
    """A response's ``send``, passed on, that tells whether the response has started."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        """Whether ``http.response.start`` went out."""

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self._send(message)
