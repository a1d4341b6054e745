"""Admission rules for new orders and offers, checked in ``Reason``'s order of precedence.

Each kind's rules come in consecutive groups (``*_shape_problem`` first): the engine asks the
groups in order and reports the first reason found, which is the first in precedence.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.offers import (
    DEFAULT_NOTICE_SECONDS,
    MAX_NOTICE_SECONDS,
    MAX_PROVISIONING_TIMEOUT_SECONDS,
    MIN_PROVISIONING_TIMEOUT_SECONDS,
)
from gpux_contracts.offers import Tier as OfferTier
from gpux_matching.domain.reliability import valid_bp
from gpux_matching.domain.types import OrderType, Reason, Tier, TimeInForce
from gpux_matching.domain.units import Rate

# Enum members read once: a class attribute lookup on an Enum costs ~10x a global.
_DUPLICATE_ID = Reason.DUPLICATE_ID
_EXPIRED_ON_ARRIVAL = Reason.EXPIRED_ON_ARRIVAL
_GTD = TimeInForce.GTD
_INVALID_HOURS = Reason.INVALID_HOURS
_INVALID_MIN_RELIABILITY = Reason.INVALID_MIN_RELIABILITY
_INVALID_ORDER_TYPE = Reason.INVALID_ORDER_TYPE
_INVALID_PRICE = Reason.INVALID_PRICE
_INVALID_QUANTITY = Reason.INVALID_QUANTITY
_INVALID_TIER = Reason.INVALID_TIER
_INVALID_TIME_IN_FORCE = Reason.INVALID_TIME_IN_FORCE
_LIMIT = OrderType.LIMIT
_MISSING_EXPIRY = Reason.MISSING_EXPIRY
_MISSING_PRICE = Reason.MISSING_PRICE
_UNKNOWN_CURRENCY = Reason.UNKNOWN_CURRENCY
_INVALID_NOTICE = Reason.INVALID_NOTICE
_INVALID_PROVISIONING_TIMEOUT = Reason.INVALID_PROVISIONING_TIMEOUT
_ON_DEMAND = OfferTier.ON_DEMAND

DEFAULT_NOTICE_S = DEFAULT_NOTICE_SECONDS
"""An offer's interruption notice unless its seller states a longer one (seconds)."""
MAX_NOTICE_S = MAX_NOTICE_SECONDS
"""The longest notice an offer may state (seconds)."""

OFFER_TIERS = frozenset(OfferTier)
ORDER_TIERS = frozenset(Tier)
ORDER_TYPES = frozenset(OrderType)
TIMES_IN_FORCE = frozenset(TimeInForce)


def offer_shape_problem(
    duplicate: bool,
    tier: str,
    gpus: int,
    price_micros: int,
    interruptible_price_micros: int | None = None,
) -> Reason | None:
    """The first of a new offer's rejections that concern the offer itself, or None."""
    if duplicate:
        return _DUPLICATE_ID
    if tier not in OFFER_TIERS:
        return _INVALID_TIER
    if gpus < 1:
        return _INVALID_QUANTITY
    if price_micros <= 0:
        return _INVALID_PRICE
    return interruptible_price_problem(tier, price_micros, interruptible_price_micros)


def interruptible_price_problem(
    tier: str, price_micros: int, interruptible_price_micros: int | None
) -> Reason | None:
    """INVALID_PRICE for an interruptible price that is not positive, is above the on-demand
    price ``price_micros`` or is given to an offer of tier interruptible; else None."""
    if interruptible_price_micros is None:
        return None
    if (
        tier != _ON_DEMAND
        or interruptible_price_micros <= 0
        or interruptible_price_micros > price_micros
    ):
        return _INVALID_PRICE
    return None


def offer_terms_problem(  # noqa: PLR0917 - one argument per rule checked
    currency: str,
    rates: Mapping[str, Rate],
    min_hours: int | None,
    notice_s: int,
    available_until: int | None,
    now: int,
    *,
    provisioning_s: int = 0,
) -> Reason | None:
    """The first of a new offer's later rejections (currency, minimum hours, notice,
    provisioning timeout, expiry)."""
    if currency not in rates:
        return _UNKNOWN_CURRENCY
    if min_hours is not None and min_hours < 1:
        return _INVALID_HOURS
    if not DEFAULT_NOTICE_S <= notice_s <= MAX_NOTICE_S:
        return _INVALID_NOTICE
    if provisioning_s and not (
        MIN_PROVISIONING_TIMEOUT_SECONDS <= provisioning_s <= MAX_PROVISIONING_TIMEOUT_SECONDS
    ):
        return _INVALID_PROVISIONING_TIMEOUT
    if available_until is not None and available_until <= now:
        return _EXPIRED_ON_ARRIVAL
    return None


def order_shape_problem(
    duplicate: bool, tier: str, order_type: str, time_in_force: str, gpus: int
) -> Reason | None:
    """The first of a new order's rejections that concern its kind and size, or None."""
    if duplicate:
        return _DUPLICATE_ID
    if tier not in ORDER_TIERS:
        return _INVALID_TIER
    if order_type not in ORDER_TYPES:
        return _INVALID_ORDER_TYPE
    if time_in_force not in TIMES_IN_FORCE:
        return _INVALID_TIME_IN_FORCE
    if gpus < 1:
        return _INVALID_QUANTITY
    return None


def order_price_problem(
    order_type: str, price_micros: int | None, currency: str, rates: Mapping[str, Rate]
) -> Reason | None:
    """The first of a new order's rejections about its price and currency, or None."""
    if price_micros is None and order_type == _LIMIT:
        return _MISSING_PRICE
    if price_micros is not None and price_micros <= 0:
        return _INVALID_PRICE
    if currency not in rates:
        return _UNKNOWN_CURRENCY
    return None


def order_terms_problem(
    time_in_force: str,
    hours: int | None,
    expires_at: int | None,
    now: int,
    min_reliability_bp: int | None = None,
) -> Reason | None:
    """The first of a new order's last rejections (rental hours, minimum reliability,
    expiry), or None."""
    if hours is not None and hours < 1:
        return _INVALID_HOURS
    if min_reliability_bp is not None and not valid_bp(min_reliability_bp):
        return _INVALID_MIN_RELIABILITY
    if time_in_force == _GTD:
        if expires_at is None:
            return _MISSING_EXPIRY
        if expires_at <= now:
            return _EXPIRED_ON_ARRIVAL
    return None


def change_problem(  # noqa: PLR0917 - the offer's prices now, then the change
    tier: str,
    price_now: int,
    interruptible_now: int | None,
    price_micros: int | None,
    gpus: int | None,
    interruptible_price_micros: int | None,
) -> Reason | None:
    """The first reason a change of an offer of ``tier`` priced ``price_now`` (and
    ``interruptible_now``, if it has an interruptible leg) is invalid, or None (unknown ids
    are checked first). The prices after the change must still be valid together."""
    if gpus is not None and gpus < 1:
        return _INVALID_QUANTITY
    if price_micros is not None and price_micros <= 0:
        return _INVALID_PRICE
    if interruptible_price_micros is None and (price_micros is None or interruptible_now is None):
        return None
    return interruptible_price_problem(
        tier,
        price_now if price_micros is None else price_micros,
        interruptible_now if interruptible_price_micros is None else interruptible_price_micros,
    )
