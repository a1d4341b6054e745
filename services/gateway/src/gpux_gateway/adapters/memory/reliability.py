"""Billing's reliability counts in memory, as the PostgreSQL tables keep them: a unit's changes
reduced to each row's largest and written at its commit."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_contracts.reliability import ReliabilityChanged, supersedes
from gpux_gateway.adapters.memory.state import GatewayState
from gpux_gateway.domain.reliability import LargestCounts
from gpux_gateway.reliability.repository import NOTHING_COUNTED, SellerReliability


class MemoryReliability:
    """Counts in ``GatewayState.offer_reliability`` and ``GatewayState.seller_reliability``;
    the unit's changes are kept (``LargestCounts``) and written by ``flush`` at its commit."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state
        self._changes = LargestCounts()

    async def apply(self, change: ReliabilityChanged) -> None:
        """Keep the change for the commit where it counts at least as much as the unit's."""
        self._changes.add(change)

    def flush(self) -> None:
        """Write the unit's largest counts per offer and per seller, each unless the held ones
        counted more."""
        changes, self._changes = self._changes, LargestCounts()
        offers, sellers = self._state.offer_reliability, self._state.seller_reliability
        for change in changes.by_offer():
            held = offers.get(change.offer_id)
            if supersedes(change.offer, None if held is None else held[1]):
                offers[change.offer_id] = (change.seller_id, change.offer)
        for change in changes.by_seller():
            if supersedes(change.seller, sellers.get(change.seller_id)):
                sellers[change.seller_id] = change.seller

    async def of_seller(self, seller_id: str, offer_ids: Sequence[str]) -> SellerReliability:
        """The seller's counts and those of the named offers of the seller's."""
        offers = self._state.offer_reliability
        return SellerReliability(
            seller=self._state.seller_reliability.get(seller_id, NOTHING_COUNTED),
            offers={
                offer_id: offers[offer_id][1]
                for offer_id in offer_ids
                if offer_id in offers and offers[offer_id][0] == seller_id
            },
        )
