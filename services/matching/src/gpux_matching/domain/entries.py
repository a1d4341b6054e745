"""Resting entries: mutable, slotted, one per live offer or resting bid (engine-internal)."""

from __future__ import annotations

from gpux_matching.domain.results import Level
from gpux_matching.domain.types import Side

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_SIDE_ASK = Side.ASK
_SIDE_BID = Side.BID

NO_HOURS = 1 << 62
"""Stands in for an open-ended rental: it satisfies every minimum."""

_new = tuple.__new__


class OfferEntry:
    """A seller's live offer. ``key`` is its book position: the reference price."""

    __slots__ = (
        "available_until",
        "billing",
        "currency",
        "gpu",
        "gpus",
        "key",
        "level",
        "min_hours",
        "offer_id",
        "price_micros",
        "region",
        "remaining",
        "seller_id",
        "seq",
        "sold",
        "taken",
        "tier",
    )

    def __init__(
        self,
        offer_id: str,
        seller_id: str,
        gpu: str,
        tier: str,
        price_micros: int,
        currency: str,
        gpus: int,
        billing: str,
        region: str | None,
        min_hours: int | None,
        available_until: int | None,
    ) -> None:
        self.offer_id = offer_id
        self.seller_id = seller_id
        self.gpu = gpu
        self.tier = tier
        self.price_micros = price_micros
        self.currency = currency
        self.gpus = gpus
        self.sold = 0
        self.remaining = gpus
        self.billing = billing
        self.region = region
        self.min_hours = min_hours or 0
        self.available_until = available_until
        self.key = 0
        self.seq = 0
        self.taken = 0
        """Fills this offer made as the taker so far: the next trade id's index."""
        self.level: Level = _new(Level, (gpu, tier, _SIDE_ASK, currency, price_micros))


class BidEntry:
    """A buyer's order. ``key`` is its book position: minus its reference limit.

    Only limit GTC/GTD orders rest, so the entry keeps no order type or time in force: a
    resting entry with ``expires_at`` is GTD.
    """

    __slots__ = (
        "buyer_id",
        "currency",
        "expires_at",
        "filled",
        "gpu",
        "gpus",
        "hours",
        "hours_or_max",
        "key",
        "level",
        "order_id",
        "price_micros",
        "region",
        "remaining",
        "seq",
        "taken",
        "tier",
    )

    def __init__(
        self,
        order_id: str,
        buyer_id: str,
        gpu: str,
        tier: str,
        price_micros: int,
        currency: str,
        gpus: int,
        region: str | None,
        hours: int | None,
        expires_at: int | None,
    ) -> None:
        self.order_id = order_id
        self.buyer_id = buyer_id
        self.gpu = gpu
        self.tier = tier
        self.price_micros = price_micros
        """Limit (or a market order's cap); 0 for a market order without a cap."""
        self.currency = currency
        self.gpus = gpus
        self.filled = 0
        self.remaining = gpus
        self.region = region
        self.hours = hours
        self.hours_or_max = NO_HOURS if hours is None else hours
        self.expires_at = expires_at
        self.key = 0
        self.seq = 0
        self.taken = 0
        """Fills this order made as the taker so far: the next trade id's index."""
        self.level: Level = _new(Level, (gpu, tier, _SIDE_BID, currency, price_micros))
