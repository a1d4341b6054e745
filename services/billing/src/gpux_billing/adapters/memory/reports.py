"""Pending sellers' reports in memory, with the PostgreSQL adapter's rules (one contract suite)."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_billing.domain.provisioning import PendingReport


class MemoryPendingReports:
    """Pending reports by lease id (part of the memory unit of work's state)."""

    def __init__(self, pending: dict[str, PendingReport]) -> None:
        self._pending = pending

    async def keep(self, report: PendingReport) -> bool:
        """Keep a report for its lease; False when one is kept already (the first stands)."""
        if report.lease_id in self._pending:
            return False
        self._pending[report.lease_id] = report
        return True

    async def take(self, lease_ids: Sequence[str]) -> dict[str, PendingReport]:
        """Remove and return the reports kept for these leases."""
        return {i: self._pending.pop(i) for i in sorted(set(lease_ids)) if i in self._pending}
