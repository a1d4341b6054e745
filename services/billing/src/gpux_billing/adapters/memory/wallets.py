"""Top-ups in memory, with the PostgreSQL adapter's rules (one contract suite for both)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from gpux_billing.domain.topups import REQUESTED, Topup


class MemoryWallets:
    """Top-ups in a dictionary (part of the memory unit of work's state)."""

    def __init__(self, topups: dict[str, Topup]) -> None:
        self._topups = topups

    async def topup(self, topup_id: str) -> Topup | None:
        """A top-up, or None."""
        return self._topups.get(topup_id)

    async def record_request(self, topup: Topup, at: datetime) -> Topup:
        """Record a requested top-up (keeping a confirmation that came first); returns it."""
        found = self._topups.get(topup.id)
        if found is None:
            self._topups[topup.id] = replace(topup, confirmed=False)
        elif found.account_id is None:  # only a confirmation came: it stays confirmed
            self._topups[topup.id] = replace(
                found,
                account_id=topup.account_id,
                currency=topup.currency,
                amount_micros=topup.amount_micros,
                provider=topup.provider,
            )
        return self._topups[topup.id]

    async def record_confirmation(self, topup_id: str, at: datetime) -> Topup:
        """Mark a top-up confirmed (creating a placeholder when its request has not come yet)."""
        found = self._topups.get(topup_id)
        if found is None:
            found = Topup(topup_id, None, None, None, None, REQUESTED, confirmed=True)
        self._topups[topup_id] = replace(found, confirmed=True)
        return self._topups[topup_id]

    async def set_status(
        self, topup_id: str, status: str, reason: str | None, at: datetime
    ) -> None:
        """Move a top-up to ``booked`` or ``rejected``."""
        found = self._topups.get(topup_id)
        if found is not None:
            self._topups[topup_id] = replace(found, status=status)
