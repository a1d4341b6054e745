"""The accounts and api_keys tables."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.postgres.repository import ConnectionRepository
from gpux_gateway.domain.access import Scope
from gpux_gateway.keys.repository import KeyRow


def _account(row: asyncpg.Record) -> AccountRow:
    return AccountRow(
        row["id"],
        row["name"],
        tuple(Role(r) for r in row["roles"]),
        AccountStatus(row["status"]),
        row["created_at"],
    )


def _key(row: asyncpg.Record) -> KeyRow:
    return KeyRow(
        row["id"],
        row["account_id"],
        row["name"],
        bytes(row["digest"]),
        frozenset(Scope(s) for s in row["scopes"]),
        row["created_at"],
        row["revoked_at"],
    )


class PostgresAccounts(ConnectionRepository):
    """Accounts in ``gateway.accounts``."""

    async def add(self, account: AccountRow) -> None:
        """Store a new account."""
        await self._conn.execute(
            "INSERT INTO gateway.accounts (id, name, roles, status, created_at, updated_at)"
            " VALUES ($1, $2, $3, $4, $5, $5)",
            account.id,
            account.name,
            [r.value for r in account.roles],
            account.status.value,
            account.created_at,
        )

    async def get(self, account_id: str) -> AccountRow | None:
        """One account, or None."""
        row = await self._conn.fetchrow("SELECT * FROM gateway.accounts WHERE id = $1", account_id)
        return _account(row) if row else None

    async def set_status(
        self, account_id: str, status: AccountStatus, now: datetime
    ) -> AccountRow | None:
        """Change an account's status; None when there is no such account."""
        row = await self._conn.fetchrow(
            "UPDATE gateway.accounts SET status = $2, updated_at = $3 WHERE id = $1 RETURNING *",
            account_id,
            status.value,
            now,
        )
        return _account(row) if row else None


class PostgresKeys(ConnectionRepository):
    """API key digests in ``gateway.api_keys``."""

    async def add(self, key: KeyRow) -> None:
        """Store a new key's digest."""
        await self._conn.execute(
            "INSERT INTO gateway.api_keys (id, account_id, name, digest, scopes, created_at)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            key.id,
            key.account_id,
            key.name,
            key.digest,
            sorted(s.value for s in key.scopes),
            key.created_at,
        )

    async def with_account(self, key_id: str) -> tuple[KeyRow, AccountRow] | None:
        """A key and its account, for authentication."""
        row = await self._conn.fetchrow(
            "SELECT k.*, a.name AS a_name, a.roles, a.status, a.created_at AS a_created_at"
            " FROM gateway.api_keys k JOIN gateway.accounts a ON a.id = k.account_id"
            " WHERE k.id = $1",
            key_id,
        )
        if row is None:
            return None
        account = AccountRow(
            row["account_id"],
            row["a_name"],
            tuple(Role(r) for r in row["roles"]),
            AccountStatus(row["status"]),
            row["a_created_at"],
        )
        return _key(row), account

    async def of_account(self, account_id: str) -> list[KeyRow]:
        """An account's keys, in id order."""
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.api_keys WHERE account_id = $1 ORDER BY id", account_id
        )
        return [_key(r) for r in rows]

    async def revoke(self, account_id: str, key_id: str, now: datetime) -> KeyRow | None:
        """Revoke one of the account's keys (once); the key as it now stands, or None."""
        row = await self._conn.fetchrow(
            "UPDATE gateway.api_keys SET revoked_at = coalesce(revoked_at, $3)"
            " WHERE id = $1 AND account_id = $2 RETURNING *",
            key_id,
            account_id,
            now,
        )
        return None if row is None else _key(row)
