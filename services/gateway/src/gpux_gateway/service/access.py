"""A refused access as its HTTP answer: the domain's AccessError as a problem."""

from __future__ import annotations

from typing import TypeVar

from gpux_contracts.accounts import Role
from gpux_gateway.domain.access import AccessError, Principal, Scope
from gpux_platform.problems import ProblemError

T = TypeVar("T")


def problem_from(error: AccessError) -> ProblemError:
    """The HTTP answer to a refused access."""
    title = "Unauthorized" if error.status == 401 else "Forbidden"
    if error.status == 422:
        title = "Request validation failed"
    return ProblemError(error.status, error.slug, title, error.detail)


def account_id_for(who: Principal, scope: Scope, role: Role | None = None) -> str:
    """The caller's account id, if it holds the role and the scope; else a 403 problem."""
    try:
        return who.require(scope, role)
    except AccessError as exc:
        raise problem_from(exc) from None


def admin_only(who: Principal) -> None:
    """Refuse anyone but the admin with a 403 problem."""
    try:
        who.require_admin()
    except AccessError as exc:
        raise problem_from(exc) from None


def unauthorized(detail: str) -> ProblemError:
    """A 401 problem that asks for a Bearer key."""
    return ProblemError(
        401, "unauthorized", "Unauthorized", detail, headers={"WWW-Authenticate": "Bearer"}
    )


def not_found(detail: str) -> ProblemError:
    """A 404 problem (another account's resource is answered the same way)."""
    return ProblemError(404, "not-found", "Not found", detail)


def found(row: T | None, what: str) -> T:
    """``row``, or the 404 problem ``no such <what>`` when there is none (or it is another
    account's: the repositories answer only the caller's)."""
    if row is None:
        raise not_found(f"no such {what}")
    return row
