"""Payouts in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from gpux_billing.domain.payouts import Payout


class MemoryPayouts:
    """Payouts in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, payouts: dict[str, Payout]) -> None:
        self._payouts = payouts

    async def get(self, payout_id: str) -> Payout | None:
        """A payout, or None."""
        return self._payouts.get(payout_id)

    async def add(self, payout: Payout) -> bool:
        """Store a decided payout; False when its id is stored already (it stands)."""
        if payout.id in self._payouts:
            return False
        self._payouts[payout.id] = payout
        return True

    async def save(self, payout: Payout) -> None:
        """Write a stored payout's new status."""
        if payout.id in self._payouts:
            self._payouts[payout.id] = payout
