"""The ssh_keys table."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from gpux_gateway.adapters.postgres.repository import ConnectionRepository, OwnedTable
from gpux_gateway.domain.ssh_keys import SshKeyType
from gpux_gateway.ssh_keys.repository import SshKeyRow


def _row(row: asyncpg.Record) -> SshKeyRow:
    return SshKeyRow(**{**dict(row), "type": SshKeyType(row["type"])})


SSH_KEYS = OwnedTable("gateway.ssh_keys", "account_id", _row)


class PostgresSshKeys(ConnectionRepository):
    """Buyers' SSH public keys in ``gateway.ssh_keys``."""

    async def add(self, key: SshKeyRow) -> SshKeyRow:
        """Store a new key; the stored row when the account has a key with its fingerprint
        (two concurrent registrations of one key: the second waits, then reads the first)."""
        row = await self._conn.fetchrow(
            "INSERT INTO gateway.ssh_keys (id, account_id, name, type, public_key, fingerprint,"
            " bits, comment, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            " ON CONFLICT (account_id, fingerprint) DO NOTHING RETURNING *",
            key.id,
            key.account_id,
            key.name,
            key.type.value,
            key.public_key,
            key.fingerprint,
            key.bits,
            key.comment,
            key.created_at,
        )
        if row is None:
            row = await self._conn.fetchrow(
                "SELECT * FROM gateway.ssh_keys WHERE account_id = $1 AND fingerprint = $2",
                key.account_id,
                key.fingerprint,
            )
        return _row(row)

    async def page(self, account_id: str, after: str | None, limit: int) -> list[SshKeyRow]:
        """Up to ``limit`` of the account's keys in id order, after the cursor id."""
        return await SSH_KEYS.page(self._conn, account_id, after, limit)

    async def get(self, account_id: str, key_id: str) -> SshKeyRow | None:
        """One of the account's keys, or None."""
        return await SSH_KEYS.get(self._conn, account_id, key_id)

    async def listed(self, account_id: str, key_ids: Sequence[str] | None) -> list[SshKeyRow]:
        """The account's keys among ``key_ids`` (None: all of them), in id order."""
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.ssh_keys WHERE account_id = $1"
            " AND ($2::text[] IS NULL OR id = ANY($2::text[])) ORDER BY id",
            account_id,
            None if key_ids is None else list(key_ids),
        )
        return [_row(r) for r in rows]

    async def delete(self, account_id: str, key_id: str) -> bool:
        """Delete one of the account's keys; False when it has no such key."""
        return await SSH_KEYS.delete(self._conn, account_id, key_id)
