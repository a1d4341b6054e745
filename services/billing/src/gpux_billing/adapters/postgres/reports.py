"""Pending sellers' reports in PostgreSQL (``billing.pending_lease_reports``).

The lease id is locked first by both sides (``PostgresLeases.lock``: the seller's report and
the trade that opens the lease), so one of them always sees what the other wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.provisioning import PendingReport, ReportKind

_KEEP = """
INSERT INTO billing.pending_lease_reports
       (lease_id, buyer_id, seller_id, kind, reported_at, detail)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (lease_id) DO NOTHING
RETURNING true
"""
_TAKE = """
DELETE FROM billing.pending_lease_reports WHERE lease_id = ANY($1::text[])
RETURNING lease_id, buyer_id, seller_id, kind, reported_at, detail
"""


class PostgresPendingReports(PostgresRepository):
    """Pending reports on the unit of work's connection."""

    async def keep(self, report: PendingReport) -> bool:
        """Keep a report for its lease; False when one is kept already (the first stands)."""
        kept = await self.conn.fetchval(
            _KEEP,
            report.lease_id,
            report.buyer_id,
            report.seller_id,
            report.kind.value,
            report.reported_at,
            report.detail,
        )
        return bool(kept)

    async def take(self, lease_ids: Sequence[str]) -> dict[str, PendingReport]:
        """Remove and return the reports kept for these leases (one statement)."""
        if not lease_ids:
            return {}
        rows = await self.conn.fetch(_TAKE, list(lease_ids))
        return {
            r["lease_id"]: PendingReport(
                r["lease_id"],
                r["buyer_id"],
                r["seller_id"],
                ReportKind(r["kind"]),
                r["reported_at"],
                r["detail"],
            )
            for r in rows
        }
