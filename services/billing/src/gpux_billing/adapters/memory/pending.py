"""What billing keeps in memory for leases it has not opened yet (the book's interruptions,
sellers' reports), with the PostgreSQL adapters' rules: one per lease, the first stands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar


class OfLease(Protocol):
    """Something kept for one lease until billing opens it."""

    @property
    def lease_id(self) -> str: ...


T = TypeVar("T", bound=OfLease)


class MemoryPendingByLease(Generic[T]):
    """What is kept by lease id (part of the memory unit of work's state)."""

    def __init__(self, pending: dict[str, T]) -> None:
        self._pending = pending

    async def keep(self, item: T) -> bool:
        """Keep an item for its lease; False when one is kept already (the first stands)."""
        if item.lease_id in self._pending:
            return False
        self._pending[item.lease_id] = item
        return True

    async def take(self, lease_ids: Sequence[str]) -> dict[str, T]:
        """Remove and return what is kept for these leases."""
        return {i: self._pending.pop(i) for i in sorted(set(lease_ids)) if i in self._pending}
