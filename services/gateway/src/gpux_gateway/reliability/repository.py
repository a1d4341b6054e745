"""What the reliability view stores: each offer's and each seller's counts, as billing last
counted them (counts only grow: ``gpux_contracts.reliability.supersedes``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts

NOTHING_COUNTED = ReliabilityCounts()
"""The counts of an offer or a seller billing has not counted a lease of yet."""


@dataclass(frozen=True, slots=True)
class SellerReliability:
    """A seller's counts and those of some of its offers (an offer absent: nothing counted)."""

    seller: ReliabilityCounts = NOTHING_COUNTED
    offers: Mapping[str, ReliabilityCounts] = field(default_factory=dict)

    def of(self, offer_id: str) -> ReliabilityCounts:
        """One offer's counts (zeros when billing counted none of its leases)."""
        return self.offers.get(offer_id, NOTHING_COUNTED)


class ReliabilityRepository(Protocol):
    """The offer_reliability and seller_reliability tables.

    ``apply`` is written when the unit of work commits: the unit's changes come to the largest
    counts per offer and per seller (``gpux_gateway.domain.reliability.LargestCounts``), each
    row written once and in key order, in one round trip; nothing in the same unit reads them
    back.
    """

    async def apply(self, change: ReliabilityChanged) -> None:
        """Keep the change's offer counts and seller counts, each unless the held ones counted
        more (``supersedes``): a replay or a late copy never steps them back."""
        ...

    async def of_seller(self, seller_id: str, offer_ids: Sequence[str]) -> SellerReliability:
        """The seller's counts and those of the named offers of the seller's."""
        ...
