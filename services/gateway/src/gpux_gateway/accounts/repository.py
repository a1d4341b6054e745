"""What the accounts resource stores: accounts, and the repository that keeps them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_contracts.accounts import AccountStatus, Role


@dataclass(frozen=True, slots=True)
class AccountRow:
    """An account as stored."""

    id: str
    name: str
    roles: tuple[Role, ...]
    status: AccountStatus
    created_at: datetime


class AccountsRepository(Protocol):
    """The accounts table."""

    async def add(self, account: AccountRow) -> None:
        """Store a new account."""
        ...

    async def get(self, account_id: str) -> AccountRow | None:
        """One account, or None."""
        ...

    async def set_status(
        self, account_id: str, status: AccountStatus, now: datetime
    ) -> AccountRow | None:
        """Change an account's status; None when there is no such account."""
        ...
