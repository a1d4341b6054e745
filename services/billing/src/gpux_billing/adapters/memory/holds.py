"""Order holds in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

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

    async def add(self, hold: Hold, at: datetime) -> None:
        """Remember the hold placed for an order (once: a second one changes nothing)."""
        self._holds.setdefault(hold.order_id, replace(hold, released_micros=0, leased_gpus=0))

    async def record_release(self, order_id: str, released_micros: int, at: datetime) -> None:
        """Add to what has been released of an order's hold."""
        found = self._holds.get(order_id)
        if found is not None:
            released = found.released_micros + released_micros
            self._holds[order_id] = replace(found, released_micros=released)

    async def set_leased_gpus(self, order_id: str, leased_gpus: int) -> None:
        """Record how many of the order's GPUs took their share of the hold into leases."""
        found = self._holds.get(order_id)
        if found is not None:
            self._holds[order_id] = replace(found, leased_gpus=leased_gpus)
