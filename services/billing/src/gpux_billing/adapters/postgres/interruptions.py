"""Pending interruptions in PostgreSQL (``billing.pending_interruptions``).

The lease id is locked first by both sides (``PostgresLeases.lock``: the book's interruption
and the trade that opens the lease), so one of them always sees what the other wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.interruptions import Pending
from gpux_billing.domain.leases import Interruption
from gpux_contracts.capacity import InterruptionCause

_KEEP = """
INSERT INTO billing.pending_interruptions
       (lease_id, buyer_id, offer_id, seller_id, cause, noticed_at, interrupt_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (lease_id) DO NOTHING
RETURNING true
"""
_TAKE = """
DELETE FROM billing.pending_interruptions WHERE lease_id = ANY($1::text[])
RETURNING lease_id, buyer_id, offer_id, seller_id, cause, noticed_at, interrupt_at
"""


class PostgresPendingInterruptions(PostgresRepository):
    """Pending interruptions on the unit of work's connection."""

    async def keep(self, pending: Pending) -> bool:
        """Keep an interruption for its lease; False when one is kept already (it stands)."""
        i = pending.interruption
        kept = await self.conn.fetchval(
            _KEEP,
            pending.lease_id,
            pending.buyer_id,
            pending.offer_id,
            pending.seller_id,
            i.cause.value,
            i.noticed_at,
            i.at,
        )
        return bool(kept)

    async def take(self, lease_ids: Sequence[str]) -> dict[str, Pending]:
        """Remove and return the interruptions kept for these leases (one statement)."""
        if not lease_ids:
            return {}
        rows = await self.conn.fetch(_TAKE, list(lease_ids))
        return {
            r["lease_id"]: Pending(
                r["lease_id"],
                r["buyer_id"],
                r["offer_id"],
                r["seller_id"],
                Interruption(r["interrupt_at"], InterruptionCause(r["cause"]), r["noticed_at"]),
            )
            for r in rows
        }
