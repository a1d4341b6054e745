"""Order holds in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from gpux_billing.domain.holds import Hold


class MemoryHolds:
    """Holds in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, holds: dict[str, Hold]) -> None:
        self._holds = holds

    async def get(self, order_id: str) -> Hold | None:
        """The hold of an order, or None."""
        return self._holds.get(order_id)

    async def get_many(self, order_ids: Sequence[str]) -> dict[str, Hold]:
        """The holds of these orders (those that have one)."""
        return {o: self._holds[o] for o in sorted(order_ids) if o in self._holds}

    async def add_many(self, holds: Sequence[tuple[Hold, datetime]]) -> None:
        """Remember the holds placed for orders (once per order: a second one changes nothing)."""
        for hold, _ in holds:
            self._holds.setdefault(hold.order_id, replace(hold, released_micros=0, leased_gpus=0))

    async def record_releases(self, releases: Sequence[tuple[str, int, datetime]]) -> None:
        """Add to what has been released of orders' holds."""
        for order_id, released_micros, _ in releases:
            found = self._holds.get(order_id)
            if found is not None:
                released = found.released_micros + released_micros
                self._holds[order_id] = replace(found, released_micros=released)

    async def set_leased_gpus(self, leased_gpus: Mapping[str, int]) -> None:
        """Record how many of each order's GPUs took their share of its hold into leases."""
        for order_id, leased in leased_gpus.items():
            found = self._holds.get(order_id)
            if found is not None:
                self._holds[order_id] = replace(found, leased_gpus=leased)
