"""Sellers' reliability for the book: each seller's rate from ``billing.reliability``.

Every instance reads ``billing.reliability`` whole (no group), like ``fx.rates``. A record
carries an offer's counts and its seller's; per seller the counts with the largest total win
(``gpux_contracts.reliability.supersedes``, the rule every reader shares), so reading the
topic again from the start, as every start does, and a seller's records arriving out of order
from different partitions never step a seller back. The engine takes each seller's rate in
basis points (``ReliabilityCounts.rate_bp``) with the total it was counted over, and keeps the
same rule itself (what a partition's previous owner logged may have counted more than this
instance's feed has read yet); a seller with nothing counted has none. So a seller whose
total grew is news even if its rate did not move: the engine must hold the new total.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts, supersedes


class ReliabilityFeed:
    """The latest counts and rate per seller, and whether the topic was read up to where each
    of its partitions ended at start (before that, a rate may still be an old one)."""

    def __init__(self) -> None:
        self._counts: dict[str, ReliabilityCounts] = {}
        self._rates: dict[str, int] = {}
        self._ends: dict[int, int] | None = None
        self._read: dict[int, int] = {}
        """Per partition: the offset after the last record read."""
        self.caught_up = False
        """True once the records that were on the topic at start have been read."""

    def set_ends(self, ends: Mapping[int, int]) -> None:
        """Each partition's end offset at start: until all are reached, rates may be old."""
        self._ends = dict(ends)
        self.caught_up = self._reached()

    def apply(self, event: ReliabilityChanged | None, partition: int, offset: int) -> bool:
        """Take the record at ``offset`` of ``partition`` (None: not readable); True when a
        rated seller's rate or total changed, or the feed just caught up."""
        was = self.caught_up
        self._read[partition] = max(self._read.get(partition, 0), offset + 1)
        if not was:
            self.caught_up = self._reached()
        changed = event is not None and self._take(event)
        return self.caught_up and (changed or not was)

    def rates(self) -> dict[str, int]:
        """Each rated seller's rate in basis points."""
        return dict(self._rates)

    def totals(self) -> dict[str, int]:
        """The total each rated seller's rate was counted over."""
        return {seller: self._counts[seller].total for seller in self._rates}

    def counts(self, seller_id: str) -> ReliabilityCounts | None:
        """The counts held for a seller (None: nothing read for it)."""
        return self._counts.get(seller_id)

    def _take(self, event: ReliabilityChanged) -> bool:
        """Keep the seller's counts unless those held counted more; whether its rate or its
        total moved."""
        seller, counts = event.seller_id, event.seller
        held = self._counts.get(seller)
        if not supersedes(counts, held):
            return False
        self._counts[seller] = counts
        rate = counts.rate_bp()
        if rate is None:
            return False
        moved = self._rates.get(seller) != rate or held is None or counts.total > held.total
        self._rates[seller] = rate
        return moved

    def _reached(self) -> bool:
        ends = self._ends
        if ends is None:
            return False
        return all(self._read.get(p, 0) >= end for p, end in ends.items())
