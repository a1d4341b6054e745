"""Which resting entries a taker would fill, and how many GPUs from each (read-only).

Planning before filling lets FOK check the whole quantity first and keeps the book untouched
until the engine applies the plan. Incompatible entries (other region, minimum hours above
the rental, the taker's own account) are skipped but stay where they are.
"""

from __future__ import annotations

from gpux_matching.domain.book import BookSide, candidates
from gpux_matching.domain.entries import BidEntry, OfferEntry

Plan = list[tuple[OfferEntry, int]]
BidPlan = list[tuple[BidEntry, int]]


def plan_for_bid(
    bid: BidEntry, sides: tuple[BookSide[OfferEntry], ...], bound: int
) -> tuple[Plan, int]:
    """Offers this bid takes in price-time order with keys up to ``bound``, and the total."""
    source = candidates(sides, bound)
    if source is None:
        return [], 0
    need = bid.remaining
    plan: Plan = []
    buyer, region, hours = bid.buyer_id, bid.region, bid.hours_or_max
    for offer in source:
        if (
            offer.seller_id == buyer
            or offer.min_hours > hours
            or (region is not None and offer.region != region)
        ):
            continue
        take = offer.remaining if offer.remaining < need else need
        plan.append((offer, take))
        need -= take
        if not need:
            break
    return plan, bid.remaining - need


def plan_for_offer(
    offer: OfferEntry, sides: tuple[BookSide[BidEntry], ...], bound: int
) -> tuple[BidPlan, int]:
    """Bids this offer fills in price-time order with keys up to ``bound``, and the total."""
    source = candidates(sides, bound)
    if source is None:
        return [], 0
    need = offer.remaining
    plan: BidPlan = []
    seller, region, min_hours = offer.seller_id, offer.region, offer.min_hours
    for bid in source:
        if (
            bid.buyer_id == seller
            or min_hours > bid.hours_or_max
            or (bid.region is not None and bid.region != region)
        ):
            continue
        take = bid.remaining if bid.remaining < need else need
        plan.append((bid, take))
        need -= take
        if not need:
            break
    return plan, offer.remaining - need
