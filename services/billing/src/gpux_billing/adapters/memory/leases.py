"""Leases in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from gpux_billing.domain.leases import Lease, State, Terms, next_due


@dataclass(frozen=True, slots=True)
class Stored:
    """A lease and when it is next due (None once ended)."""

    lease: Lease
    next_due_at: datetime | None


class MemoryLeases:
    """Leases in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, leases: dict[str, Stored]) -> None:
        self._leases = leases

    async def add(self, lease: Lease) -> bool:
        """Store a new lease; False when it exists already (a replayed trade)."""
        if lease.id in self._leases:
            return False
        self._leases[lease.id] = Stored(lease, next_due(lease.terms, lease.state))
        return True

    async def add_many(self, leases: Sequence[Lease]) -> None:
        """Store new leases (one already stored stands)."""
        for lease in leases:
            await self.add(lease)

    async def existing(self, lease_ids: Sequence[str]) -> set[str]:
        """Which of these leases were opened already."""
        return {i for i in lease_ids if i in self._leases}

    async def get(self, lease_id: str) -> Lease | None:
        """A lease, or None."""
        found = self._leases.get(lease_id)
        return None if found is None else found.lease

    async def lock(self, lease_ids: Sequence[str]) -> None:
        """Nothing to lock: one memory unit runs at a time."""

    async def due(self, now: datetime, limit: int) -> list[Lease]:
        """Running leases due by ``now``, oldest first (ties: by id)."""
        due = sorted(
            (s.next_due_at, s.lease.id, s.lease)
            for s in self._leases.values()
            if s.next_due_at is not None and s.next_due_at <= now
        )
        return [lease for _, _, lease in due[:limit]]

    async def save(self, changed: Sequence[tuple[Terms, State]]) -> None:
        """Write the states of settled leases back (and the terms of one become ready)."""
        for terms, state in changed:
            found = self._leases.get(terms.lease_id)
            if found is not None:
                self._leases[terms.lease_id] = Stored(
                    replace(found.lease, terms=terms, state=state), next_due(terms, state)
                )

    async def postpone(self, lease_ids: Sequence[str], until: datetime) -> None:
        """Make running leases due again no sooner than ``until`` (nothing else changes)."""
        for lease_id in lease_ids:
            found = self._leases.get(lease_id)
            if found is not None and found.next_due_at is not None:
                later = max(found.next_due_at, until)
                self._leases[lease_id] = replace(found, next_due_at=later)

    def next_due_at(self, lease_id: str) -> datetime | None:
        """When a lease is next due (for tests; None once ended or unknown)."""
        found = self._leases.get(lease_id)
        return None if found is None else found.next_due_at
