"""The web app (``web/``, built by Vite into ``web/dist``) served at ``/`` beside the API.

One route, added after every API route, answers the GETs (and HEADs) that nothing else
matched: a built file as it is (hashed assets cached for a year, everything else revalidated),
and ``index.html`` for the app's own routes (``/``, ``/gpus/rtx-4090``, ``/console/leases``:
``APP_ROUTES``, the
client router's, ``web/src/app/router.tsx``), so they load on a reload or from a link. Any
other path is the app's own "page not found" for a browser (a request that accepts
``text/html``) and the gateway's 404 problem for everything else, as without the app. It
never matches another method, nor a path of the API or of the service itself (``/v1``,
``/docs``, ``/openapi.json``, ``/health*``, ``/metrics``, ...): those answer exactly as they
would without it, 404 problems included. A missing asset is a 404 too, not the index, so a stale
page that asks for an old bundle gets an error rather than HTML as JavaScript.

Without a build (``web/dist/index.html`` missing) the gateway runs as before and the app's
paths answer a 503 problem saying how to build it; the build is looked for at each request,
so one made later is served without a restart.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Match, Route
from starlette.types import Scope

from gpux_platform.problems import problem_response

DIST = Path(__file__).resolve().parents[4] / "web" / "dist"
"""Where ``npm run build`` in ``web/`` writes the app (the checkout's, as ``make up`` runs it)."""

RESERVED = ("/v1", "/docs", "/redoc", "/openapi.json", "/metrics", "/asyncapi.yaml")
"""Paths (and everything under them) the web app never answers: the API and the service's own."""
RESERVED_STEMS = ("/health", "/readyz")
"""Path beginnings the web app never answers (``/healthz``, ``/health/...``, ``/readyz``)."""
METHODS = frozenset({"GET", "HEAD"})
INDEX = "index.html"
APP_ROUTES = re.compile(
    r"/|/guide/?|/gpus/[a-z0-9][a-z0-9.-]{0,63}/?"
    r"|/console(/(orders|leases|statement|keys))?/?|/seller(/offers)?/?"
)
"""The paths the client router draws (``web/src/app/router.tsx``): they get the index (the
market, the guide, a GPU, the buyer's console and its sections, the seller's console)."""
ASSETS = "assets"
"""Vite's folder of content-hashed files: their names change with their content."""
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self';"
    " form-action 'self'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: it loads and calls nothing but this origin (no CDN,
works offline), and a page that tried would fail its browser tests with a console error."""
NOSNIFF = "nosniff"
PAGE_HEADERS = {
    "Cache-Control": REVALIDATE,
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": NOSNIFF,
}
"""What ``index.html`` is sent with, at ``/`` and at every route of the app."""
BUILD_HINT = (
    "the web app is not built: run `make web` (or `npm ci && npm run build` in web/);"
    " the API under /v1 works without it"
)


def is_reserved(path: str) -> bool:
    """Whether ``path`` belongs to the API or the service, never to the web app."""
    if path.startswith(RESERVED_STEMS):
        return True
    return any(path == prefix or path.startswith(prefix + "/") for prefix in RESERVED)


class WebAppRoute(Route):
    """The catch-all route of the web app: matches only GET/HEAD outside the reserved paths,
    so every other request is routed (or refused) as if it did not exist."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """No match for another method or a reserved path; else Starlette's path match."""
        if scope["type"] != "http" or scope["method"] not in METHODS:
            return Match.NONE, {}
        if is_reserved(scope["path"]):
            return Match.NONE, {}
        return super().matches(scope)


def resolve(dist: Path, path: str) -> Path | None:
    """The file of ``dist`` a request path names, or None (outside ``dist``, or not a file)."""
    relative = PurePosixPath(path.lstrip("/"))
    if ".." in relative.parts:
        return None
    candidate = dist.joinpath(*relative.parts)
    return candidate if candidate.is_file() else None


def looks_like_file(path: str) -> bool:
    """Whether the path's last segment has an extension (an asset, not an app route)."""
    return "." in PurePosixPath(path).name


def wants_html(request: Request) -> bool:
    """Whether the client asks for a page (a browser's navigation), not for data."""
    return "text/html" in request.headers.get("accept", "")


def serve_from(dist: Path, request: Request) -> Response:
    """The answer for one GET or HEAD of the web app's paths."""
    index = dist / INDEX
    if not index.is_file():
        return problem_response(request, 503, "web-app-not-built", "Web app not built", BUILD_HINT)
    path = request.url.path
    found = resolve(dist, path)
    page = APP_ROUTES.fullmatch(path) or (not looks_like_file(path) and wants_html(request))
    if found == index or (found is None and page):
        return FileResponse(index, headers=PAGE_HEADERS)
    if found is None:
        what = f"no file {path}" if looks_like_file(path) else f"no page or endpoint {path}"
        return problem_response(request, 404, "not-found", "Not found", what)
    immutable = found.parent.name == ASSETS and found.parent.parent == dist
    headers = {
        "Cache-Control": IMMUTABLE if immutable else REVALIDATE,
        "X-Content-Type-Options": NOSNIFF,
    }
    return FileResponse(found, headers=headers)


def mount(app: FastAPI, dist: Path = DIST) -> None:
    """Serve the web app of ``dist`` on the paths no earlier route matched (call it last)."""

    async def web_app(request: Request) -> Response:
        return serve_from(dist, request)

    app.router.routes.append(WebAppRoute("/{path:path}", web_app, methods=["GET"]))
