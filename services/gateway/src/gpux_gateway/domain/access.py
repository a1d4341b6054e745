"""Roles, scopes and the rules between them (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from gpux_contracts.accounts import AccountStatus, Role


class Scope(StrEnum):
    """What an API key may be used for."""

    READ = "read"
    """Read the account's own resources and the market."""
    OFFERS_WRITE = "offers:write"
    """Create, change and withdraw offers (sellers)."""
    ORDERS_WRITE = "orders:write"
    """Place and cancel orders (buyers)."""
    WALLET_WRITE = "wallet:write"
    """Top up the wallet and stop leases (buyers)."""
    KEYS_MANAGE = "keys:manage"
    """Create and revoke the account's API keys."""


ROLE_SCOPES: dict[Role, frozenset[Scope]] = {
    Role.BUYER: frozenset({Scope.ORDERS_WRITE, Scope.WALLET_WRITE}),
    Role.SELLER: frozenset({Scope.OFFERS_WRITE}),
}
COMMON_SCOPES = frozenset({Scope.READ, Scope.KEYS_MANAGE})


class AccessError(Exception):
    """A request the principal may not make; ``status`` is 401 or 403."""

    def __init__(self, status: int, slug: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail


def allowed_scopes(roles: Iterable[Role]) -> frozenset[Scope]:
    """Every scope an account with these roles may give its keys."""
    scopes = set(COMMON_SCOPES)
    for role in roles:
        scopes |= ROLE_SCOPES[role]
    return frozenset(scopes)


def scopes_for_new_key(
    roles: Iterable[Role], requested: Iterable[Scope] | None
) -> frozenset[Scope]:
    """The scopes of a new key: all the roles allow, or the requested subset of them."""
    allowed = allowed_scopes(roles)
    if requested is None:
        return allowed
    wanted = frozenset(requested)
    if not wanted:
        raise AccessError(422, "invalid-scopes", "a key needs at least one scope")
    extra = wanted - allowed
    if extra:
        names = ", ".join(sorted(s.value for s in extra))
        raise AccessError(403, "scope-not-allowed", f"this account's roles do not allow: {names}")
    return wanted


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: an account through one of its keys, or the admin."""

    account_id: str | None
    roles: frozenset[Role]
    scopes: frozenset[Scope]
    key_id: str | None
    status: AccountStatus = AccountStatus.ACTIVE
    is_admin: bool = False
    session_id: str | None = None
    """The browser session the request came with (None: an API key's own request)."""

    def require(self, scope: Scope, role: Role | None = None) -> str:
        """The account id, if this principal holds the role and the scope; else AccessError."""
        if self.is_admin or self.account_id is None:
            raise AccessError(403, "forbidden", "this endpoint is for accounts, not the admin key")
        if self.status is not AccountStatus.ACTIVE:
            raise AccessError(403, "account-suspended", "this account is suspended")
        if role is not None and role not in self.roles:
            raise AccessError(403, "role-required", f"only {role.value} accounts may do this")
        if scope not in self.scopes:
            raise AccessError(403, "scope-required", f"this key lacks the scope {scope.value}")
        return self.account_id

    def require_admin(self) -> None:
        """Refuse anyone but the admin."""
        if not self.is_admin:
            raise AccessError(403, "admin-required", "only the admin key may do this")
