"""Which resting entries a taker would fill, and how many GPUs from each (read-only).

Planning before filling lets FOK check the whole quantity first and keeps the book untouched
until the engine applies the plan. Incompatible entries (other region, minimum hours above
the rental, the taker's own account, a seller below the bid's minimum reliability) are
skipped but stay where they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from gpux_matching.domain.book import BookSide, candidates
from gpux_matching.domain.entries import BidEntry, OfferEntry
from gpux_matching.domain.reliability import UNRATED

Plan = list[tuple[OfferEntry, int]]
BidPlan = list[tuple[BidEntry, int]]

Entry = TypeVar("Entry", OfferEntry, BidEntry)


def plan_for_bid(
    bid: BidEntry,
    sides: tuple[BookSide[OfferEntry], ...],
    bound: int,
    reliability: Mapping[str, int],
) -> tuple[Plan, int]:
    """Offer legs this bid takes in price-time order with keys up to ``bound``, and the
    total (``reliability``: the sellers' rates, for a bid with a minimum). Both legs of a
    pool may meet an ``any`` bid: together they give at most the pool's free GPUs."""
    plan: Plan = []
    source = candidates(sides, bound)
    if source is None:
        return plan, 0
    buyer, region, hours = bid.buyer_id, bid.region, bid.hours_or_max
    minimum = bid.min_reliability_bp
    need = wanted = bid.remaining
    used: dict[str, int] = {}
    """GPUs planned so far from each two-leg pool."""
    for offer in source:
        if (
            offer.seller_id == buyer
            or offer.min_hours > hours
            or (region is not None and offer.region != region)
            or (minimum is not None and reliability.get(offer.seller_id, UNRATED) < minimum)
        ):
            continue
        have = offer.remaining
        if offer.twin is not None:
            have -= used.get(offer.offer_id, 0)
            if have <= 0:
                continue
        take = have if have < need else need
        if offer.twin is not None:
            used[offer.offer_id] = used.get(offer.offer_id, 0) + take
        plan.append((offer, take))
        need -= take
        if not need:
            break
    return plan, wanted - need


def plan_for_offer(
    offer: OfferEntry,
    sides: tuple[BookSide[BidEntry], ...],
    bound: int,
    reliability: Mapping[str, int],
) -> tuple[BidPlan, int]:
    """Bids this offer fills in price-time order with keys up to ``bound``, and the total
    (``reliability``: the sellers' rates, for bids with a minimum)."""
    seller, region, min_hours = offer.seller_id, offer.region, offer.min_hours
    rate = reliability.get(seller, UNRATED)

    def compatible(bid: BidEntry) -> bool:
        minimum = bid.min_reliability_bp
        return (
            bid.buyer_id != seller
            and min_hours <= bid.hours_or_max
            and (bid.region is None or bid.region == region)
            and (minimum is None or minimum <= rate)
        )

    return _plan(candidates(sides, bound), offer.remaining, compatible)


def _plan(
    source: Iterator[Entry] | None, need: int, compatible: Callable[[Entry], bool]
) -> tuple[list[tuple[Entry, int]], int]:
    """The compatible entries of ``source`` in order, each with what it gives towards
    ``need``, until it is met; and the total."""
    plan: list[tuple[Entry, int]] = []
    if source is None:
        return plan, 0
    wanted = need
    for entry in source:
        if not compatible(entry):
            continue
        take = entry.remaining if entry.remaining < need else need
        plan.append((entry, take))
        need -= take
        if not need:
            break
    return plan, wanted - need
