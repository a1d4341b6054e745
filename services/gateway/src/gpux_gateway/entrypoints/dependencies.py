"""The FastAPI dependencies of the endpoints: the gateway, who is calling, the unit of work.

Who is calling is answered first, and from memory once a key was seen (``keys.service``):
a refused request opens no unit of work, and an authenticated one holds one connection, that
of its own unit (a key read from PostgreSQL is read in a unit of its own, closed before the
request's opens, so a request never waits for a second connection while it holds one).

The unit of work is the request's boundary: it opens before the endpoint runs, commits when
the endpoint returns (before the response is sent, ``scope="function"``) and rolls back when
it raises.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gpux_gateway.domain import sessions as session_rules
from gpux_gateway.domain.access import Principal
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.entrypoints.schemas import problem_responses
from gpux_gateway.keys import service as keys
from gpux_gateway.service.access import unauthorized
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.sessions import service as sessions
from gpux_platform.problems import ProblemError

bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer gpx_…`")

_ADMIN = Principal(None, frozenset(), frozenset(), None, is_admin=True)


async def gateway(request: Request) -> Gateway:
    """The gateway the app was wired with (async: FastAPI runs a plain def in a worker
    thread, a hop per request that costs about as much as the request's own work)."""
    gw: Gateway = request.app.state.gateway
    return gw


GatewayDep = Annotated[Gateway, Depends(gateway)]

RATE_LIMIT_HEADERS = "rate_limit_headers"
"""Where the request's rate-limit verdict leaves its ``RateLimit-*`` headers
(``request.state``): a route that answers with a response of its own sends them too."""


async def current_principal(
    request: Request,
    response: Response,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    gw: GatewayDep,
) -> Principal:
    """Authenticate (an API key, else a browser session's cookie and, on a write, its CSRF
    token), then count the request against the key's limit."""
    if credentials is None:
        principal = await _session_principal(request, gw)
    else:
        principal = await _key_principal(credentials.credentials, gw)
    verdict = await gw.limiter.hit(principal.key_id or "admin")
    if not verdict.allowed:
        raise ProblemError(
            429, "rate-limited", "Too many requests", "slow down", headers=verdict.headers
        )
    response.headers.update(verdict.headers)
    setattr(request.state, RATE_LIMIT_HEADERS, verdict.headers)
    return principal


async def _key_principal(token: str, gw: Gateway) -> Principal:
    admin = gw.settings.admin_key
    if admin is not None and hmac.compare_digest(token.encode(), admin.get_secret_value().encode()):
        return _ADMIN
    return await keys.authenticate(gw.views.principals, gw.unit_of_work, gw.pepper, token)


async def _session_principal(request: Request, gw: Gateway) -> Principal:
    cookie = request.cookies.get(session_rules.SESSION_COOKIE)
    if cookie is None:
        raise unauthorized("send `Authorization: Bearer <API key>` (or sign in: POST /v1/sessions)")
    principal, session = await sessions.authenticate(
        gw.views.principals, gw.unit_of_work, gw.pepper, cookie
    )
    presented = request.headers.get(session_rules.CSRF_HEADER)
    if request.method not in session_rules.SAFE_METHODS and not session_rules.csrf_ok(
        gw.pepper, session.secret, presented
    ):
        raise ProblemError(
            403,
            "csrf-failed",
            "CSRF check failed",
            f"a write made with the session cookie must send its CSRF token as"
            f" `{session_rules.CSRF_HEADER}` (the `{session_rules.CSRF_COOKIE}` cookie)",
        )
    return principal


PrincipalDep = Annotated[Principal, Depends(current_principal)]


async def _unit(gw: Gateway) -> AsyncIterator[GatewayUnitOfWork]:
    async with gw.unit_of_work() as uow:
        yield uow
        await uow.commit()


async def unit_of_work(gw: GatewayDep, _: PrincipalDep) -> AsyncIterator[GatewayUnitOfWork]:
    """The request's unit of work, once the caller is known: committed once the endpoint
    returned, else rolled back."""
    async for uow in _unit(gw):
        yield uow


UnitOfWorkDep = Annotated[GatewayUnitOfWork, Depends(unit_of_work, scope="function")]


async def anonymous_unit_of_work(gw: GatewayDep) -> AsyncIterator[GatewayUnitOfWork]:
    """The unit of work of a request without a key (sign-up)."""
    async for uow in _unit(gw):
        yield uow


AnonymousUnitOfWorkDep = Annotated[
    GatewayUnitOfWork, Depends(anonymous_unit_of_work, scope="function")
]


async def anonymous_limit(request: Request, response: Response, gw: GatewayDep) -> None:
    """Rate-limit an unauthenticated call by client address."""
    client = request.client.host if request.client else "unknown"
    verdict = await gw.limiter.hit(f"ip:{client}", anonymous=True)
    if not verdict.allowed:
        raise ProblemError(
            429, "rate-limited", "Too many requests", "slow down", headers=verdict.headers
        )
    response.headers.update(verdict.headers)
    setattr(request.state, RATE_LIMIT_HEADERS, verdict.headers)


AnonymousLimit = Depends(anonymous_limit)
"""For ``dependencies=[...]`` of public routes."""


OVERLOADED = problem_responses(
    (503, "Overloaded: the gateway takes no new writes now; retry after `Retry-After` seconds")
)
"""The ``responses`` of the routes behind the door of writes (``write_door.WriteDoor``)."""


def write_route(*problems: tuple[int, str]) -> dict[str, Any]:
    """What an order or offer write route declares (``@router.post(path, **write_route(),
    ...)``): accepted for processing (202), the 503 of the door of writes in front of it
    (``write_door.WriteDoor``, which guards every write under ``/v1/orders`` and
    ``/v1/offers``) and the route's own ``problems`` (status, why)."""
    return {"status_code": 202, "responses": {**OVERLOADED, **problem_responses(*problems)}}


WRITE_ROUTE: dict[str, Any] = write_route()
"""``write_route()``: a write route with no problems of its own."""
