"""What the keys resource stores: key digests, and the repository that keeps them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.domain.access import Scope


@dataclass(frozen=True, slots=True)
class KeyRow:
    """An API key as stored (its digest, never its secret)."""

    id: str
    account_id: str
    name: str
    digest: bytes
    scopes: frozenset[Scope]
    created_at: datetime
    revoked_at: datetime | None


class KeysRepository(Protocol):
    """The api_keys table."""

    async def add(self, key: KeyRow) -> None:
        """Store a new key's digest."""
        ...

    async def with_account(self, key_id: str) -> tuple[KeyRow, AccountRow] | None:
        """A key and its account, for authentication."""
        ...

    async def of_account(self, account_id: str) -> list[KeyRow]:
        """An account's keys, in id order."""
        ...

    async def revoke(self, account_id: str, key_id: str, now: datetime) -> KeyRow | None:
        """Revoke one of the account's keys (once: a second revocation keeps the first);
        the key as it now stands, or None when the account has no such key."""
        ...
