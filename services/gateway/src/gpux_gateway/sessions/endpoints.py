"""Routes under /v1/sessions: signing in a browser with an API key, and its sessions.

The session cookie is HttpOnly and SameSite=Strict (and Secure outside dev and tests); the CSRF
cookie is readable by the page, which sends it back as ``X-CSRF-Token`` on every write
(``entrypoints.dependencies.current_principal`` checks it).
"""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from gpux_gateway.domain.access import Scope
from gpux_gateway.domain.sessions import CSRF_COOKIE, SESSION_COOKIE
from gpux_gateway.entrypoints.dependencies import AnonymousLimit, GatewayDep, PrincipalDep
from gpux_gateway.entrypoints.schemas import Page, ResourceId, problem_responses
from gpux_gateway.service.access import account_id_for
from gpux_gateway.sessions import service
from gpux_gateway.sessions.schemas import NewSession, SessionCreated, SessionOut
from gpux_platform.problems import ProblemError
from gpux_platform.settings import Environment

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])
PLAIN_HTTP = frozenset({Environment.DEV, Environment.TEST})
"""Where cookies go over plain http (loopback): everywhere else they are ``Secure``."""


def _set_cookies(response: Response, gw: GatewayDep, cookie: str, csrf: str) -> None:
    secure = gw.settings.env not in PLAIN_HTTP
    age = gw.settings.session_ttl_h * 3600
    common = {"max_age": age, "path": "/", "secure": secure, "samesite": "strict"}
    response.set_cookie(SESSION_COOKIE, cookie, httponly=True, **common)  # type: ignore[arg-type]
    response.set_cookie(CSRF_COOKIE, csrf, httponly=False, **common)  # type: ignore[arg-type]


def _clear_cookies(response: Response, gw: GatewayDep) -> None:
    secure = gw.settings.env not in PLAIN_HTTP
    for name, http_only in ((SESSION_COOKIE, True), (CSRF_COOKIE, False)):
        response.delete_cookie(name, path="/", secure=secure, httponly=http_only, samesite="strict")


@router.post(
    "",
    status_code=201,
    response_model=SessionCreated,
    dependencies=[AnonymousLimit],
    summary="Sign in: open a browser session with an API key",
    responses=problem_responses((401, "Not a valid API key")),
)
async def create_session(body: NewSession, request: Request, gw: GatewayDep) -> JSONResponse:
    created, cookie = await service.sign_in(
        gw.views.principals,
        gw.unit_of_work,
        gw.pepper,
        api_key=body.api_key.get_secret_value(),
        user_agent=request.headers.get("user-agent", ""),
        ttl=timedelta(hours=gw.settings.session_ttl_h),
    )
    response = JSONResponse(created.model_dump(mode="json"), status_code=201)
    _set_cookies(response, gw, cookie, created.csrf_token)
    return response


@router.get("", response_model=Page[SessionOut], summary="The account's live browser sessions")
async def list_sessions(who: PrincipalDep, gw: GatewayDep) -> Page[SessionOut]:
    account_id = account_id_for(who, Scope.READ)
    items = await service.listed(gw.unit_of_work, account_id, who.session_id)
    return Page[SessionOut](items=items, next_cursor=None)


@router.delete(
    "/current",
    status_code=204,
    summary="Sign out: end the session this request came with",
    responses=problem_responses((409, "The request came with an API key, not a session")),
)
async def sign_out(who: PrincipalDep, gw: GatewayDep) -> Response:
    account_id = account_id_for(who, Scope.READ)
    if who.session_id is None:
        raise ProblemError(409, "not-a-session", "Not a session", "this request used an API key")
    await service.revoke(gw.unit_of_work, account_id, who.session_id)
    response = Response(status_code=204)
    _clear_cookies(response, gw)
    return response


@router.delete("/{session_id}", status_code=204, summary="Revoke one of the account's sessions")
async def revoke_session(session_id: ResourceId, who: PrincipalDep, gw: GatewayDep) -> Response:
    scope = Scope.READ if session_id == who.session_id else Scope.KEYS_MANAGE
    account_id = account_id_for(who, scope)
    await service.revoke(gw.unit_of_work, account_id, session_id)
    response = Response(status_code=204)
    if session_id == who.session_id:
        _clear_cookies(response, gw)
    return response
