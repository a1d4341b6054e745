"""The sessions table."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from gpux_gateway.adapters.postgres.repository import ConnectionRepository
from gpux_gateway.sessions.repository import SessionRow


def _row(row: asyncpg.Record) -> SessionRow:
    return SessionRow(**dict(row))


class PostgresSessions(ConnectionRepository):
    """Browser sessions in ``gateway.sessions``."""

    async def add(self, session: SessionRow) -> None:
        """Store a new session."""
        await self._conn.execute(
            "INSERT INTO gateway.sessions (id, account_id, key_id, digest, user_agent,"
            " created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            session.id,
            session.account_id,
            session.key_id,
            session.digest,
            session.user_agent,
            session.created_at,
            session.expires_at,
            session.revoked_at,
        )

    async def get(self, session_id: str) -> SessionRow | None:
        """A session by id, whoever's, or None."""
        row = await self._conn.fetchrow("SELECT * FROM gateway.sessions WHERE id = $1", session_id)
        return None if row is None else _row(row)

    async def active(self, account_id: str, now: datetime, limit: int) -> list[SessionRow]:
        """The account's sessions neither revoked nor expired at ``now``, newest first."""
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.sessions WHERE account_id = $1 AND revoked_at IS NULL"
            " AND expires_at > $2 ORDER BY created_at DESC, id DESC LIMIT $3",
            account_id,
            now,
            limit,
        )
        return [_row(r) for r in rows]

    async def revoke(self, account_id: str, session_id: str, now: datetime) -> bool:
        """Revoke one of the account's live sessions; False when it has no such session."""
        done: str = await self._conn.execute(
            "UPDATE gateway.sessions SET revoked_at = $3 WHERE id = $1 AND account_id = $2"
            " AND revoked_at IS NULL AND expires_at > $3",
            session_id,
            account_id,
            now,
        )
        return done == "UPDATE 1"
