"""The payouts table: sellers' requests, and billing's decisions applied (deferred, batched)."""

from __future__ import annotations

import asyncpg

from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutStatus, PayoutStatusChanged
from gpux_gateway.adapters.postgres.deferred import DeferredRepository
from gpux_gateway.adapters.postgres.repository import OwnedTable
from gpux_gateway.payouts.repository import PayoutRow

# Only a status of a higher rank (payouts.repository.RANK) replaces the stored one: billing's
# events come in order per seller, and a replay or a late copy changes nothing.
APPLY = (
    "UPDATE gateway.payouts AS p SET status = $2, reason = $3,"
    " reference = CASE WHEN $4 = '' THEN p.reference ELSE $4 END, updated_at = $5"
    " WHERE p.id = $1 AND (CASE p.status WHEN 'pending_request' THEN 0 WHEN 'pending' THEN 1"
    " ELSE 2 END) < (CASE $2 WHEN 'pending_request' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END)"
)


def _row(row: asyncpg.Record) -> PayoutRow:
    return PayoutRow(
        **{
            **dict(row),
            "currency": Currency(row["currency"]),
            "status": PayoutStatus(row["status"]),
        }
    )


PAYOUTS = OwnedTable("gateway.payouts", "seller_id", _row)


class PostgresPayouts(DeferredRepository):
    """Sellers' payouts in ``gateway.payouts``."""

    async def add(self, payout: PayoutRow) -> None:
        """Store a new request."""
        await self._conn.execute(
            "INSERT INTO gateway.payouts (id, seller_id, currency, amount_micros, method,"
            " destination, status, reason, reference, created_at, updated_at)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            payout.id,
            payout.seller_id,
            payout.currency.value,
            payout.amount_micros,
            payout.method,
            payout.destination,
            payout.status.value,
            payout.reason,
            payout.reference,
            payout.created_at,
            payout.updated_at,
        )

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[PayoutRow]:
        """Up to ``limit`` of the seller's payouts in id order, after the cursor id."""
        return await PAYOUTS.page(self._conn, seller_id, after, limit)

    async def get(self, seller_id: str, payout_id: str) -> PayoutRow | None:
        """One of the seller's payouts, or None."""
        return await PAYOUTS.get(self._conn, seller_id, payout_id)

    async def find(self, payout_id: str) -> PayoutRow | None:
        """Any seller's payout, or None."""
        row = await self._conn.fetchrow("SELECT * FROM gateway.payouts WHERE id = $1", payout_id)
        return None if row is None else _row(row)

    async def apply(self, change: PayoutStatusChanged) -> None:
        """Queue billing's decision (written at the commit, one run per batch)."""
        self._deferred.add(
            APPLY,
            change.payout_id,
            change.status.value,
            None if change.reason is None else change.reason.value,
            change.reference,
            change.changed_at,
        )
