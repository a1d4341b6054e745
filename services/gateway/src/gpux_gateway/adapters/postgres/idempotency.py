"""The idempotency table: responses of creating requests, kept for replays."""

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from gpux_gateway.domain.idempotency import StoredResponse


class PostgresIdempotency:
    """Responses in ``gateway.idempotency``, claimed per key under a transaction advisory lock."""

    def __init__(self, conn: asyncpg.Connection | asyncpg.Pool) -> None:
        self._conn = conn

    async def claim(self, scope: str, key: str, not_before: datetime) -> StoredResponse | None:
        """Hold (scope, key) until the transaction ends and read what is kept under it: one
        round trip (``gateway.idempotency_claim``: the advisory lock, then the row)."""
        row = await self._conn.fetchrow(
            "SELECT fingerprint, status_code, body FROM gateway.idempotency_claim($1, $2, $3)",
            scope,
            key,
            not_before,
        )
        if row is None:
            return None
        return StoredResponse(row["fingerprint"], row["status_code"], json.loads(row["body"]))

    async def store(self, scope: str, key: str, response: StoredResponse, now: datetime) -> None:
        """Keep a response for replays (replacing an expired one under the same key)."""
        await self._conn.execute(
            "INSERT INTO gateway.idempotency"
            " (scope, key, fingerprint, status_code, body, created_at)"
            " VALUES ($1, $2, $3, $4, $5::json, $6)"
            " ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
            " status_code = EXCLUDED.status_code, body = EXCLUDED.body,"
            " created_at = EXCLUDED.created_at",
            scope,
            key,
            response.fingerprint,
            response.status_code,
            json.dumps(response.body),
            now,
        )

    async def purge(self, before: datetime) -> int:
        """Forget responses older than the retention; returns how many."""
        result = await self._conn.execute(
            "DELETE FROM gateway.idempotency WHERE created_at < $1", before
        )
        return int(result.split()[-1])
