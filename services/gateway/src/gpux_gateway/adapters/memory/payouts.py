"""Sellers' payouts in memory, with the PostgreSQL adapter's rules."""

from __future__ import annotations

from dataclasses import replace

from gpux_contracts.payouts import PayoutStatusChanged
from gpux_gateway.adapters.memory.state import GatewayState, id_page
from gpux_gateway.payouts.repository import RANK, PayoutRow


class MemoryPayouts:
    """Payouts in ``GatewayState.payouts``."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state

    async def add(self, payout: PayoutRow) -> None:
        """Store a new request (its seller must exist, like the foreign key)."""
        if payout.id in self._state.payouts or payout.seller_id not in self._state.accounts:
            raise ValueError(f"payout {payout.id}: exists, or no account {payout.seller_id}")
        self._state.payouts[payout.id] = payout

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[PayoutRow]:
        """Up to ``limit`` of the seller's payouts in id order, after the cursor id."""
        mine = [p for p in self._state.payouts.values() if p.seller_id == seller_id]
        return id_page(mine, after, limit)

    async def get(self, seller_id: str, payout_id: str) -> PayoutRow | None:
        """One of the seller's payouts, or None."""
        payout = self._state.payouts.get(payout_id)
        return payout if payout is not None and payout.seller_id == seller_id else None

    async def find(self, payout_id: str) -> PayoutRow | None:
        """Any seller's payout, or None."""
        return self._state.payouts.get(payout_id)

    async def apply(self, change: PayoutStatusChanged) -> None:
        """Apply billing's decision when it ranks above the stored status."""
        payout = self._state.payouts.get(change.payout_id)
        if payout is None or RANK[change.status] <= RANK[payout.status]:
            return
        self._state.payouts[payout.id] = replace(
            payout,
            status=change.status,
            reason=None if change.reason is None else change.reason.value,
            reference=change.reference or payout.reference,
            updated_at=change.changed_at,
        )
