"""The lease_access and lease_reports tables: sealed access details and the reports sent."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from gpux_gateway.adapters.postgres.repository import ConnectionRepository, OwnedTable
from gpux_gateway.domain.handoff import Sealed
from gpux_gateway.handoff.repository import LeaseAccessRow, ReportKind

PUT = (
    "INSERT INTO gateway.lease_access (lease_id, buyer_id, seller_id, key_id, nonce,"
    " ciphertext, posted_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    " ON CONFLICT (lease_id) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce,"
    " ciphertext = EXCLUDED.ciphertext, posted_at = EXCLUDED.posted_at, erased_at = NULL"
)

# One set-based statement: every held row whose lease ended or failed before $1.
ERASE = (
    "UPDATE gateway.lease_access a SET key_id = NULL, nonce = NULL, ciphertext = NULL,"
    " erased_at = $2 FROM gateway.leases l"
    " WHERE l.id = a.lease_id AND a.erased_at IS NULL"
    " AND l.status IN ('ended', 'failed') AND l.ended_at < $1"
)


def _row(row: asyncpg.Record) -> LeaseAccessRow:
    held = row["ciphertext"] is not None
    sealed = Sealed(row["key_id"], bytes(row["nonce"]), bytes(row["ciphertext"])) if held else None
    return LeaseAccessRow(
        lease_id=row["lease_id"],
        buyer_id=row["buyer_id"],
        seller_id=row["seller_id"],
        sealed=sealed,
        posted_at=row["posted_at"],
        erased_at=row["erased_at"],
    )


ACCESS = OwnedTable("gateway.lease_access", "buyer_id", _row, key="lease_id")


class PostgresLeaseAccess(ConnectionRepository):
    """Sealed access details in ``gateway.lease_access``, reports in ``gateway.lease_reports``."""

    async def put(self, row: LeaseAccessRow) -> None:
        """Store the lease's sealed details, replacing any posted before."""
        assert row.sealed is not None
        await self._conn.execute(
            PUT,
            row.lease_id,
            row.buyer_id,
            row.seller_id,
            row.sealed.key_id,
            row.sealed.nonce,
            row.sealed.ciphertext,
            row.posted_at,
        )

    async def for_buyer(self, buyer_id: str, lease_id: str) -> LeaseAccessRow | None:
        """The details of a lease the account rents, or None."""
        return await ACCESS.get(self._conn, buyer_id, lease_id)

    async def claim_report(self, lease_id: str, kind: ReportKind, now: datetime) -> bool:
        """Note the lease's report of ``kind`` unless one was noted (a concurrent claim waits
        on the key, then finds it taken)."""
        claimed = await self._conn.fetchval(
            "INSERT INTO gateway.lease_reports (lease_id, kind, reported_at) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING RETURNING true",
            lease_id,
            kind.value,
            now,
        )
        return bool(claimed)

    async def erase(self, *, ended_before: datetime, now: datetime) -> int:
        """Erase the details of leases that ended or failed before ``ended_before``."""
        status = await self._conn.execute(ERASE, ended_before, now)
        return int(str(status).split()[-1])
