"""Sellers' reliability in memory, with the PostgreSQL adapter's rules (one contract suite)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gpux_billing.domain.reliability import Counted, Kind, Outcome, add, distinct, summed
from gpux_contracts.reliability import ReliabilityCounts


@dataclass
class Counts:
    """What billing counted: each lease's outcomes by (lease, kind), each offer's seller and
    counts (part of the memory unit of work's state)."""

    counted: dict[tuple[str, Kind], Outcome] = field(default_factory=dict)
    offers: dict[str, tuple[str, ReliabilityCounts]] = field(default_factory=dict)


class MemoryReliability:
    """Reliability counts in dictionaries."""

    def __init__(self, counts: Counts) -> None:
        self._counts = counts

    async def count(self, outcomes: Sequence[Outcome], at: datetime) -> Counted:
        """Count the outcomes whose lease has not counted their kind yet; the counts after."""
        counted, offers = self._counts.counted, self._counts.offers
        new = [o for o in distinct(outcomes) if o.key not in counted]
        kinds: dict[str, list[Kind]] = {}
        for outcome in new:
            counted[outcome.key] = outcome
            kinds.setdefault(outcome.offer_id, []).append(outcome.kind)
            offers.setdefault(outcome.offer_id, (outcome.seller_id, ReliabilityCounts()))
        for offer_id, added in kinds.items():
            seller_id, before = offers[offer_id]
            offers[offer_id] = (seller_id, add(before, added))
        sellers = {o.seller_id for o in new}
        return Counted(
            tuple(new),
            {offer_id: offers[offer_id][1] for offer_id in kinds},
            {s: summed(c for seller, c in offers.values() if seller == s) for s in sellers},
        )

    def offer(self, offer_id: str) -> ReliabilityCounts | None:
        """An offer's counts (for tests; None: nothing counted)."""
        found = self._counts.offers.get(offer_id)
        return None if found is None else found[1]
