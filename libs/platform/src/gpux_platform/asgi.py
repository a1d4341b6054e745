"""Plain ASGI middleware of HTTP requests, the shape every middleware of ours shares.

Plain ASGI, not Starlette's ``BaseHTTPMiddleware``, which runs every request through an anyio
task group and memory streams. Lifespan (and any other) scopes pass through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


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
