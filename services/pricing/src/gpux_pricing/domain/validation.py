"""Which offers reach the book: checks and rejection reasons, in order of precedence.

An offer of tier ``on_demand`` may also give an interruptible price: the same GPUs sold as
interruptible leases (its interruptible leg). That price is held to the rules of every price
(positive, 4 decimals, inside the GPU's band in the reference currency) and may not exceed
the on-demand price; an offer of tier ``interruptible`` has one price only. A change is
checked as the offer would stand after it, so a new interruptible price is held against the
current on-demand price or the one the same change sets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency
from gpux_contracts.offers import Tier

MAX_DECIMALS = 4


class Rejection(StrEnum):
    """Why an offer was refused; the first that applies is reported (this order)."""

    SELLER_UNKNOWN = "seller_unknown"
    """No account with this id is known (yet) to pricing."""
    SELLER_INACTIVE = "seller_inactive"
    """The seller's account is suspended, or it is not a seller."""
    UNKNOWN_GPU = "unknown_gpu"
    """The GPU id is not in the catalog."""
    UNSUPPORTED_CURRENCY = "unsupported_currency"
    """The currency is not EUR, USD or GBP."""
    PRICE_NOT_POSITIVE = "price_not_positive"
    """The price is zero or negative."""
    PRICE_PRECISION = "price_precision"
    """The price has more than 4 decimals."""
    INTERRUPTIBLE_PRICE_NOT_ON_DEMAND = "interruptible_price_not_on_demand"
    """An interruptible price is given on an offer of tier ``interruptible`` (its price is
    already the interruptible one)."""
    INTERRUPTIBLE_PRICE_NOT_POSITIVE = "interruptible_price_not_positive"
    """The interruptible price is zero or negative."""
    INTERRUPTIBLE_PRICE_PRECISION = "interruptible_price_precision"
    """The interruptible price has more than 4 decimals."""
    INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND = "interruptible_price_above_on_demand"
    """The interruptible price is above the offer's on-demand price."""
    WINDOW_IN_PAST = "window_in_past"
    """``available_until`` is not in the future."""
    NO_FX_RATE = "no_fx_rate"
    """There is no current rate to rank the offer's currency."""
    PRICE_OUT_OF_BAND = "price_out_of_band"
    """The price (in the reference currency) is outside the GPU's sanity band."""
    INTERRUPTIBLE_PRICE_OUT_OF_BAND = "interruptible_price_out_of_band"
    """The interruptible price (in the reference currency) is outside the GPU's sanity band."""


@dataclass(frozen=True, slots=True)
class Band:
    """Acceptable prices per GPU-hour in the reference currency."""

    low: Decimal
    high: Decimal


@dataclass(frozen=True, slots=True)
class SellerView:
    """What pricing knows of a seller's account."""

    status: AccountStatus
    is_seller: bool


@dataclass(frozen=True, slots=True)
class OfferFacts:
    """The parts of an offer the checks look at."""

    seller_id: str
    gpu: str
    price: Decimal
    currency: str
    available_until: datetime | None
    tier: Tier = Tier.ON_DEMAND
    interruptible_price: Decimal | None = None
    """The price of the interruptible leg of an on-demand offer, when it has one."""


@dataclass(frozen=True, slots=True)
class _Case:
    offer: OfferFacts
    seller: SellerView
    band: Band | None
    reference_price: Decimal | None
    interruptible_reference: Decimal | None
    now: datetime


def _too_precise(price: Decimal) -> bool:
    exponent = price.as_tuple().exponent
    return isinstance(exponent, int) and -exponent > MAX_DECIMALS


def _outside(band: Band | None, price: Decimal | None) -> bool:
    return band is not None and price is not None and not band.low <= price <= band.high


def _interruptible(case: _Case, fails: Callable[[Decimal], bool]) -> bool:
    """Whether the offer has an interruptible price and it fails this test."""
    price = case.offer.interruptible_price
    return price is not None and fails(price)


def _unrankable(case: _Case) -> bool:
    if case.reference_price is None:
        return True
    return case.offer.interruptible_price is not None and case.interruptible_reference is None


CHECKS: tuple[tuple[Rejection, Callable[[_Case], bool]], ...] = (
    (
        Rejection.SELLER_INACTIVE,
        lambda c: c.seller.status is not AccountStatus.ACTIVE or not c.seller.is_seller,
    ),
    (Rejection.UNKNOWN_GPU, lambda c: c.band is None),
    (Rejection.UNSUPPORTED_CURRENCY, lambda c: c.offer.currency not in Currency.__members__),
    (Rejection.PRICE_NOT_POSITIVE, lambda c: c.offer.price <= 0),
    (Rejection.PRICE_PRECISION, lambda c: _too_precise(c.offer.price)),
    (
        Rejection.INTERRUPTIBLE_PRICE_NOT_ON_DEMAND,
        lambda c: c.offer.interruptible_price is not None and c.offer.tier is not Tier.ON_DEMAND,
    ),
    (Rejection.INTERRUPTIBLE_PRICE_NOT_POSITIVE, lambda c: _interruptible(c, lambda p: p <= 0)),
    (Rejection.INTERRUPTIBLE_PRICE_PRECISION, lambda c: _interruptible(c, _too_precise)),
    (
        Rejection.INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND,
        lambda c: _interruptible(c, lambda p: p > c.offer.price),
    ),
    (
        Rejection.WINDOW_IN_PAST,
        lambda c: c.offer.available_until is not None and c.offer.available_until <= c.now,
    ),
    (Rejection.NO_FX_RATE, _unrankable),
    (Rejection.PRICE_OUT_OF_BAND, lambda c: _outside(c.band, c.reference_price)),
    (
        Rejection.INTERRUPTIBLE_PRICE_OUT_OF_BAND,
        lambda c: _outside(c.band, c.interruptible_reference),
    ),
)
"""Every check after the seller is known, in the order of ``Rejection``."""


def check_offer(
    offer: OfferFacts,
    *,
    sellers: Mapping[str, SellerView],
    gpus: Mapping[str, Band],
    reference_price: Decimal | None,
    now: datetime,
    interruptible_reference_price: Decimal | None = None,
) -> Rejection | None:
    """The first reason to refuse the offer, or None when it may go to the book.

    ``reference_price`` is the offer's price in the reference currency, or None when
    no usable FX rate exists; ``interruptible_reference_price`` the same of its
    interruptible price (None when it has none, or no rate exists).
    """
    seller = sellers.get(offer.seller_id)
    if seller is None:
        return Rejection.SELLER_UNKNOWN
    case = _Case(
        offer, seller, gpus.get(offer.gpu), reference_price, interruptible_reference_price, now
    )
    for reason, fails in CHECKS:
        if fails(case):
            return reason
    return None
