"""Pending interruptions in memory, with the PostgreSQL adapter's rules (one contract suite)."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_billing.domain.interruptions import Pending


class MemoryPendingInterruptions:
    """Pending interruptions by lease id (part of the memory unit of work's state)."""

    def __init__(self, pending: dict[str, Pending]) -> None:
        self._pending = pending

    async def keep(self, pending: Pending) -> bool:
        """Keep an interruption for its lease; False when one is kept already (it stands)."""
        if pending.lease_id in self._pending:
            return False
        self._pending[pending.lease_id] = pending
        return True

    async def take(self, lease_ids: Sequence[str]) -> dict[str, Pending]:
        """Remove and return the interruptions kept for these leases."""
        return {i: self._pending.pop(i) for i in sorted(set(lease_ids)) if i in self._pending}
