"""Pending interruptions in memory, with the PostgreSQL adapter's rules (one contract suite)."""

from __future__ import annotations

from gpux_billing.adapters.memory.pending import MemoryPendingByLease
from gpux_billing.domain.interruptions import Pending


class MemoryPendingInterruptions(MemoryPendingByLease[Pending]):
    """Pending interruptions by lease id (part of the memory unit of work's state)."""
