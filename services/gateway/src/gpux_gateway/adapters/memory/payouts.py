"""Sellers' payouts in memory, with the PostgreSQL adapter's rules."""

from __future__ import annotations

from dataclasses import replace

from gpux_contracts.payouts import PayoutStatusChanged
from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.payouts.repository import RANK, PayoutRow

PAYOUTS = OwnedRows[PayoutRow](lambda s: s.payouts, lambda p: p.seller_id, "payout")


class MemoryPayouts(StateRepository):
    """Payouts in ``GatewayState.payouts``."""

    async def add(self, payout: PayoutRow) -> None:
        """Store a new request (its seller must exist, like the foreign key)."""
        PAYOUTS.add(self._state, payout)

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[PayoutRow]:
        """Up to ``limit`` of the seller's payouts in id order, after the cursor id."""
        return PAYOUTS.page(self._state, seller_id, after, limit)

    async def get(self, seller_id: str, payout_id: str) -> PayoutRow | None:
        """One of the seller's payouts, or None."""
        return PAYOUTS.get(self._state, seller_id, payout_id)

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
