"""Top-ups in PostgreSQL (``billing.topups``): requests, confirmations, their status."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.topups import Topup
from gpux_contracts.money import Currency

_GET_TOPUP = "SELECT * FROM billing.topups WHERE id = $1 FOR UPDATE"
_RECORD_REQUEST = """
INSERT INTO billing.topups (id, account_id, currency, amount_micros, provider, status,
                            requested_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id, currency = EXCLUDED.currency,
    amount_micros = EXCLUDED.amount_micros, provider = EXCLUDED.provider,
    requested_at = EXCLUDED.requested_at, updated_at = EXCLUDED.updated_at
WHERE billing.topups.account_id IS NULL
RETURNING *
"""
_RECORD_CONFIRMATION = """
INSERT INTO billing.topups (id, status, confirmed, updated_at) VALUES ($1, 'requested', true, $2)
ON CONFLICT (id) DO UPDATE SET confirmed = true, updated_at = EXCLUDED.updated_at
RETURNING *
"""


def _topup(row: asyncpg.Record) -> Topup:
    return Topup(
        row["id"],
        row["account_id"],
        None if row["currency"] is None else Currency(row["currency"]),
        row["amount_micros"],
        row["provider"],
        row["status"],
        row["confirmed"],
    )


class PostgresWallets(PostgresRepository):
    """Top-ups on the unit of work's connection."""

    async def topup(self, topup_id: str) -> Topup | None:
        """A top-up, locked for this transaction, or None."""
        return await self._one(_GET_TOPUP, topup_id, _topup)

    async def record_request(self, topup: Topup, at: datetime) -> Topup:
        """Record a requested top-up (keeping a confirmation that came first); returns it."""
        assert topup.currency is not None
        row = await self.conn.fetchrow(
            _RECORD_REQUEST,
            topup.id,
            topup.account_id,
            topup.currency.value,
            topup.amount_micros,
            topup.provider,
            topup.status,
            at,
        )
        if row is None:  # requested before (another command id with the same top-up id)
            found = await self.topup(topup.id)
            assert found is not None
            return found
        return _topup(row)

    async def record_confirmation(self, topup_id: str, at: datetime) -> Topup:
        """Mark a top-up confirmed (creating a placeholder when its request has not come yet)."""
        return _topup(await self.conn.fetchrow(_RECORD_CONFIRMATION, topup_id, at))

    async def set_status(
        self, topup_id: str, status: str, reason: str | None, at: datetime
    ) -> None:
        """Move a top-up to ``booked`` or ``rejected``."""
        await self.conn.execute(
            "UPDATE billing.topups SET status = $2, reason = $3, updated_at = $4 WHERE id = $1",
            topup_id,
            status,
            reason,
            at,
        )
