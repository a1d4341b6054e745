"""What the payouts resource stores, and the repository that keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutStatus, PayoutStatusChanged

RANK: dict[PayoutStatus, int] = {
    PayoutStatus.PENDING_REQUEST: 0,
    PayoutStatus.PENDING: 1,
    PayoutStatus.PAID: 2,
    PayoutStatus.REJECTED: 2,
}
"""A status moves only to a higher rank: a replayed or late event changes nothing."""


@dataclass(frozen=True, slots=True)
class PayoutRow:
    """A seller's payout as the gateway shows it."""

    id: str
    seller_id: str
    currency: Currency
    amount_micros: int
    method: str
    destination: str
    status: PayoutStatus
    reason: str | None
    reference: str
    created_at: datetime
    updated_at: datetime


class PayoutsRepository(Protocol):
    """The payouts table: the seller's requests, and billing's decisions applied."""

    async def add(self, payout: PayoutRow) -> None:
        """Store a new request (its id is new)."""
        ...

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[PayoutRow]:
        """Up to ``limit`` of the seller's payouts in id order, after the cursor id."""
        ...

    async def get(self, seller_id: str, payout_id: str) -> PayoutRow | None:
        """One of the seller's payouts, or None."""
        ...

    async def find(self, payout_id: str) -> PayoutRow | None:
        """Any seller's payout (the admin's routes), or None."""
        ...

    async def apply(self, change: PayoutStatusChanged) -> None:
        """Apply billing's decision to a stored payout, when it ranks above its status
        (written at the unit's commit, batched)."""
        ...
