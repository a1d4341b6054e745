"""Sealed access details and the reports sent, in memory, as the PostgreSQL tables keep them."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from gpux_gateway.adapters.memory.state import StateRepository
from gpux_gateway.domain.leases import STORED_FINAL
from gpux_gateway.handoff.repository import LeaseAccessRow, ReportKind


class MemoryLeaseAccess(StateRepository):
    """Access details in ``GatewayState.lease_access``, reports in ``lease_reports``."""

    async def put(self, row: LeaseAccessRow) -> None:
        """Store the lease's sealed details, replacing any posted before."""
        assert row.sealed is not None
        self._state.lease_access[row.lease_id] = dataclasses.replace(row, erased_at=None)

    async def for_buyer(self, buyer_id: str, lease_id: str) -> LeaseAccessRow | None:
        """The details of a lease the account rents, or None."""
        row = self._state.lease_access.get(lease_id)
        return row if row is not None and row.buyer_id == buyer_id else None

    async def claim_report(self, lease_id: str, kind: ReportKind, now: datetime) -> bool:
        """Note the lease's report of ``kind`` unless one was noted."""
        if (lease_id, kind.value) in self._state.lease_reports:
            return False
        self._state.lease_reports[(lease_id, kind.value)] = now
        return True

    async def erase(self, *, ended_before: datetime, now: datetime) -> int:
        """Erase the details of leases that ended or failed before ``ended_before``."""
        erased = 0
        for lease_id, row in list(self._state.lease_access.items()):
            lease = self._state.leases.get(lease_id)
            if row.erased_at is not None or lease is None or lease.status not in STORED_FINAL:
                continue
            if lease.ended_at is None or lease.ended_at >= ended_before:
                continue
            self._state.lease_access[lease_id] = dataclasses.replace(
                row, sealed=None, erased_at=now
            )
            erased += 1
        return erased
