"""The engine's vocabulary: sides, tiers, order kinds, statuses and reasons.

Tiers, order types and times in force are the contract's own words (``gpux_contracts``),
used as they are. Sides, statuses and reasons are the engine's: the statuses are the
subset of the contract's that the book reports (``tests/unit/test_matching_vocabulary.py``
checks each value maps onto the contract's).
"""

from __future__ import annotations

from enum import StrEnum

from gpux_contracts.orders import OrderTier as Tier
from gpux_contracts.orders import OrderType, TimeInForce

__all__ = ["OfferStatus", "OrderStatus", "OrderType", "Reason", "Side", "Tier", "TimeInForce"]


class Side(StrEnum):
    """A side of the book."""

    BID = "bid"
    """Buyers' orders: they pay at most their limit."""
    ASK = "ask"
    """Sellers' offers: they rest until filled, withdrawn or expired."""


class OrderStatus(StrEnum):
    """Where a bid stands after a command."""

    OPEN = "open"
    """Resting, nothing filled yet."""
    PARTIALLY_FILLED = "partially_filled"
    """Resting, some GPUs filled."""
    FILLED = "filled"
    """Every GPU filled; gone from the book."""
    CANCELLED = "cancelled"
    """Gone from the book with an unfilled remainder (see the reason)."""
    EXPIRED = "expired"
    """A GTD bid whose time ran out; gone from the book."""
    REJECTED = "rejected"
    """Never entered the book (see the reason)."""


class OfferStatus(StrEnum):
    """Where an offer stands after a command."""

    LIVE = "live"
    """On the book with free GPUs."""
    EXHAUSTED = "exhausted"
    """No free GPU (all leased, or its count lowered to what is leased): off the book's
    levels but kept, and live again when leases give GPUs back."""
    WITHDRAWN = "withdrawn"
    """Taken off the book by its seller."""
    EXPIRED = "expired"
    """Past its ``available_until``; gone from the book."""
    REJECTED = "rejected"
    """Never entered the book (see the reason)."""


class Reason(StrEnum):
    """Why a command was refused or an order ended unfilled.

    Rejections come first, in order of precedence: when several apply, the first listed is
    reported. The last three are not rejections but endings of an accepted order.
    """

    DUPLICATE_ID = "duplicate_id"
    """An order or offer with this id is already on the book."""
    INVALID_TIER = "invalid_tier"
    """Tier not known (offers: on_demand or interruptible; orders may also use any)."""
    INVALID_ORDER_TYPE = "invalid_order_type"
    """Order type is neither market nor limit."""
    INVALID_TIME_IN_FORCE = "invalid_time_in_force"
    """Time in force is none of gtc, gtd, ioc, fok."""
    INVALID_QUANTITY = "invalid_quantity"
    """GPU count below 1."""
    MISSING_PRICE = "missing_price"
    """A limit order without a limit price."""
    INVALID_PRICE = "invalid_price"
    """A price or cap of zero or less; an interruptible price above the on-demand price, or
    given to an interruptible offer."""
    UNKNOWN_CURRENCY = "unknown_currency"
    """No FX rate for the currency, so it cannot be ranked."""
    INVALID_HOURS = "invalid_hours"
    """Rental hours or minimum hours below 1."""
    INVALID_NOTICE = "invalid_notice"
    """An interruption notice below 120 s or above 86,400 s."""
    INVALID_PROVISIONING_TIMEOUT = "invalid_provisioning_timeout"
    """A provisioning timeout other than 0 below 60 s or above 86,400 s."""
    INVALID_MIN_RELIABILITY = "invalid_min_reliability"
    """An order's minimum seller reliability that is not an int of 0..10,000 basis points."""
    MISSING_EXPIRY = "missing_expiry"
    """A GTD order without ``expires_at``."""
    EXPIRED_ON_ARRIVAL = "expired_on_arrival"
    """``expires_at`` / ``available_until`` is not after the command's time."""
    UNKNOWN_ORDER = "unknown_order"
    """Cancel of an order that is not resting (never was, or already ended)."""
    UNKNOWN_OFFER = "unknown_offer"
    """Change or withdrawal of an offer the book does not keep (never was, or ended)."""
    UNKNOWN_LEASE = "unknown_lease"
    """Release or reclaim of a lease the book does not hold on that offer (changes nothing)."""
    NOT_INTERRUPTIBLE = "not_interruptible"
    """Reclaim of an on-demand lease, or of one already being interrupted."""
    INVALID_FX_RATE = "invalid_fx_rate"
    """An FX rate that is not a positive int or Decimal."""
    INVALID_RELIABILITY = "invalid_reliability"
    """A seller's reliability rate that is not an int of 0..10,000 basis points, or a total
    that is not an int >= 0 or names a seller without a rate in the command."""
    CANCEL_REQUESTED = "cancel_requested"
    """Ending: the buyer cancelled the remainder."""
    UNFILLED_REMAINDER = "unfilled_remainder"
    """Ending: a market or IOC order's remainder, which never rests."""
    FOK_UNFILLABLE = "fok_unfillable"
    """Ending: a FOK order that could not fill completely, so filled nothing."""
