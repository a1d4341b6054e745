"""What the wallets resource reads: billing's balances (kept in Redis by billing)."""

from __future__ import annotations

from typing import Protocol

from gpux_contracts.billing import BalanceChanged


class BalancesRepository(Protocol):
    """The balances of each account's wallets, as billing booked them."""

    async def of_account(self, account_id: str) -> list[BalanceChanged]:
        """An account's latest balance per currency, in currency order (unused wallets: none)."""
        ...
