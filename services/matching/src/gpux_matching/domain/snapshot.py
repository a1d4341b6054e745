"""Entries as plain data (dicts of str, int, None) for snapshots, and back.

The format is versioned; a snapshot restores to an engine that behaves exactly like the one
it was taken from (priority sequence, trade-id counters and rates included).
"""

from __future__ import annotations

from typing import Any

from gpux_matching.domain.entries import BidEntry, OfferEntry

FORMAT = 1
"""Bumped whenever the layout below changes; ``restore`` refuses other versions."""

Plain = dict[str, Any]


def offer_to_plain(offer: OfferEntry) -> Plain:
    """A live offer as plain data."""
    return {
        "offer_id": offer.offer_id,
        "seller_id": offer.seller_id,
        "gpu": offer.gpu,
        "tier": str(offer.tier),
        "price_micros": offer.price_micros,
        "currency": offer.currency,
        "gpus": offer.gpus,
        "sold": offer.sold,
        "remaining": offer.remaining,
        "billing": offer.billing,
        "region": offer.region,
        "min_hours": offer.min_hours or None,
        "available_until": offer.available_until,
        "seq": offer.seq,
        "taken": offer.taken,
    }


def offer_from_plain(data: Plain) -> OfferEntry:
    """The inverse of ``offer_to_plain`` (the book key is set by the engine)."""
    offer = OfferEntry(
        data["offer_id"],
        data["seller_id"],
        data["gpu"],
        data["tier"],
        data["price_micros"],
        data["currency"],
        data["gpus"],
        data["billing"],
        data["region"],
        data["min_hours"],
        data["available_until"],
    )
    offer.sold = data["sold"]
    offer.remaining = data["remaining"]
    offer.seq = data["seq"]
    offer.taken = data["taken"]
    return offer


def bid_to_plain(bid: BidEntry) -> Plain:
    """A resting order as plain data (always a limit order; GTD when it has ``expires_at``)."""
    return {
        "order_id": bid.order_id,
        "buyer_id": bid.buyer_id,
        "gpu": bid.gpu,
        "tier": str(bid.tier),
        "price_micros": bid.price_micros,
        "currency": bid.currency,
        "gpus": bid.gpus,
        "filled": bid.filled,
        "remaining": bid.remaining,
        "region": bid.region,
        "hours": bid.hours,
        "expires_at": bid.expires_at,
        "seq": bid.seq,
        "taken": bid.taken,
    }


def bid_from_plain(data: Plain) -> BidEntry:
    """The inverse of ``bid_to_plain`` (the book key is set by the engine)."""
    bid = BidEntry(
        data["order_id"],
        data["buyer_id"],
        data["gpu"],
        data["tier"],
        data["price_micros"],
        data["currency"],
        data["gpus"],
        data["region"],
        data["hours"],
        data["expires_at"],
    )
    bid.filled = data["filled"]
    bid.remaining = data["remaining"]
    bid.seq = data["seq"]
    bid.taken = data["taken"]
    return bid
