"""Payouts in PostgreSQL (``billing.payouts``): one row per payout id, its status."""

from __future__ import annotations

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.payouts import Payout
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutMethod, PayoutRejection, PayoutStatus

_GET = "SELECT * FROM billing.payouts WHERE id = $1 FOR UPDATE"
_ADD = """
INSERT INTO billing.payouts (id, seller_id, currency, amount_micros, method, destination, status,
                             reason, reference, decided_by, requested_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (id) DO NOTHING
"""
_SAVE = """
UPDATE billing.payouts SET status = $2, reason = $3, reference = $4, decided_by = $5,
                           updated_at = $6
 WHERE id = $1
"""


def _payout(row: asyncpg.Record) -> Payout:
    return Payout(
        id=row["id"],
        seller_id=row["seller_id"],
        currency=Currency(row["currency"]),
        amount_micros=row["amount_micros"],
        method=PayoutMethod(row["method"]),
        destination=row["destination"],
        status=PayoutStatus(row["status"]),
        requested_at=row["requested_at"],
        updated_at=row["updated_at"],
        reason=None if row["reason"] is None else PayoutRejection(row["reason"]),
        reference=row["reference"],
        decided_by=row["decided_by"],
    )


class PostgresPayouts(PostgresRepository):
    """Payouts on the unit of work's connection."""

    async def get(self, payout_id: str) -> Payout | None:
        """A payout, locked for this transaction, or None."""
        return await self._one(_GET, payout_id, _payout)

    async def add(self, payout: Payout) -> bool:
        """Store a decided payout; False when its id is stored already (it stands)."""
        status = await self.conn.execute(
            _ADD,
            payout.id,
            payout.seller_id,
            payout.currency.value,
            payout.amount_micros,
            payout.method.value,
            payout.destination,
            payout.status.value,
            None if payout.reason is None else payout.reason.value,
            payout.reference,
            payout.decided_by,
            payout.requested_at,
            payout.updated_at,
        )
        return bool(status == "INSERT 0 1")

    async def save(self, payout: Payout) -> None:
        """Write a stored payout's new status."""
        await self.conn.execute(
            _SAVE,
            payout.id,
            payout.status.value,
            None if payout.reason is None else payout.reason.value,
            payout.reference,
            payout.decided_by,
            payout.updated_at,
        )
