"""Seller reliability's pure rules in the gateway: orders' minimum, stored in basis points
(``gpux_contracts.reliability.min_reliability_bp``), shown and sent again (a re-buy) as the
four-place decimal the buyer's ``min_reliability`` is; and what a unit of the view's changes
comes to (``LargestCounts``)."""

from __future__ import annotations

from decimal import Decimal

from gpux_contracts.reliability import (
    BASIS_POINTS,
    RATE_PLACES,
    ReliabilityChanged,
    supersedes,
)


def shown_minimum(basis_points: int | None) -> Decimal | None:
    """A stored minimum as the order shows and sends it: four places (``0.5000``)."""
    if basis_points is None:
        return None
    return (Decimal(basis_points) / BASIS_POINTS).quantize(RATE_PLACES)


class LargestCounts:
    """A unit's ``reliability.changed`` reduced to what the view keeps: per offer and per
    seller the change with the largest counts (``supersedes``: equal totals take the later),
    so the unit writes each row once, and in key order.

    Writing them one change at a time in the batch's order would lock an offer's row and then
    its seller's, change after change; the topic is keyed by offer, so two units can hold one
    seller's changes in crosswise order and deadlock. Kept rows in key order take turns.
    """

    def __init__(self) -> None:
        self._offers: dict[str, ReliabilityChanged] = {}
        self._sellers: dict[str, ReliabilityChanged] = {}

    def add(self, change: ReliabilityChanged) -> None:
        """Keep the change for its offer and for its seller where it counts at least as much."""
        held = self._offers.get(change.offer_id)
        if supersedes(change.offer, None if held is None else held.offer):
            self._offers[change.offer_id] = change
        held = self._sellers.get(change.seller_id)
        if supersedes(change.seller, None if held is None else held.seller):
            self._sellers[change.seller_id] = change

    def __bool__(self) -> bool:
        return bool(self._offers)

    def by_offer(self) -> list[ReliabilityChanged]:
        """Each offer's largest change, in offer id order."""
        return [self._offers[offer_id] for offer_id in sorted(self._offers)]

    def by_seller(self) -> list[ReliabilityChanged]:
        """Each seller's largest change, in seller id order."""
        return [self._sellers[seller_id] for seller_id in sorted(self._sellers)]
