"""Who is calling: Bearer API keys, the admin key, and the rate limit of each."""

import hmac
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.adapters import repository
from gpux_gateway.context import Gateway
from gpux_gateway.domain import keys
from gpux_gateway.domain.access import AccessError, Principal, Scope
from gpux_platform.problems import ProblemError

bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer gpx_…`")

_ADMIN = Principal(None, frozenset(), frozenset(), None, is_admin=True)


def _unauthorized(detail: str) -> ProblemError:
    return ProblemError(
        401, "unauthorized", "Unauthorized", detail, headers={"WWW-Authenticate": "Bearer"}
    )


def problem_from(error: AccessError) -> ProblemError:
    """The HTTP answer to a refused access."""
    title = "Unauthorized" if error.status == 401 else "Forbidden"
    if error.status == 422:
        title = "Request validation failed"
    return ProblemError(error.status, error.slug, title, error.detail)


async def authenticate(gw: Gateway, token: str) -> Principal:
    """The principal a presented key stands for, or a 401 problem."""
    admin = gw.settings.admin_key
    if admin is not None and hmac.compare_digest(token.encode(), admin.get_secret_value().encode()):
        return _ADMIN
    parsed = keys.parse_key(token)
    if parsed is None:
        raise _unauthorized("not a gpux API key")
    found = await repository.key_with_account(gw.pool, parsed.key_id)
    if found is None:
        raise _unauthorized("unknown API key")
    key, account = found
    if not keys.matches(gw.pepper, parsed.secret, key.digest):
        raise _unauthorized("unknown API key")
    if key.revoked_at is not None:
        raise _unauthorized("this API key was revoked")
    return Principal(
        account.id,
        frozenset(account.roles),
        key.scopes,
        key.id,
        status=AccountStatus(account.status),
    )


def principal_dependency(gw: Gateway) -> Callable[..., Awaitable[Principal]]:
    """A FastAPI dependency: authenticate, then count the request against the key's limit."""

    async def current_principal(
        response: Response,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Principal:
        if credentials is None:
            raise _unauthorized("send `Authorization: Bearer <API key>`")
        principal = await authenticate(gw, credentials.credentials)
        identity = principal.key_id or "admin"
        verdict = await gw.limiter.hit(identity)
        if not verdict.allowed:
            raise ProblemError(
                429, "rate-limited", "Too many requests", "slow down", headers=verdict.headers
            )
        response.headers.update(verdict.headers)
        return principal

    return current_principal


def anonymous_limit(gw: Gateway) -> Callable[..., Awaitable[None]]:
    """A FastAPI dependency: rate-limit an unauthenticated call by client address."""

    async def limit(request: Request, response: Response) -> None:
        client = request.client.host if request.client else "unknown"
        verdict = await gw.limiter.hit(f"ip:{client}", anonymous=True)
        if not verdict.allowed:
            raise ProblemError(
                429, "rate-limited", "Too many requests", "slow down", headers=verdict.headers
            )
        response.headers.update(verdict.headers)

    return limit


def account_id_for(who: Principal, scope: Scope, role: Role | None = None) -> str:
    """The caller's account id, if it holds the role and the scope; else a 403 problem."""
    try:
        return who.require(scope, role)
    except AccessError as exc:
        raise problem_from(exc) from None
