"""Which offers reach the book: checks and rejection reasons, in order of precedence."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency

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
    WINDOW_IN_PAST = "window_in_past"
    """``available_until`` is not in the future."""
    NO_FX_RATE = "no_fx_rate"
    """There is no current rate to rank the offer's currency."""
    PRICE_OUT_OF_BAND = "price_out_of_band"
    """The price (in the reference currency) is outside the GPU's sanity band."""


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


@dataclass(frozen=True, slots=True)
class _Case:
    offer: OfferFacts
    seller: SellerView
    band: Band | None
    reference_price: Decimal | None
    now: datetime


def _too_precise(price: Decimal) -> bool:
    exponent = price.as_tuple().exponent
    return isinstance(exponent, int) and -exponent > MAX_DECIMALS


def _out_of_band(case: _Case) -> bool:
    band, price = case.band, case.reference_price
    return band is not None and price is not None and not band.low <= price <= band.high


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
        Rejection.WINDOW_IN_PAST,
        lambda c: c.offer.available_until is not None and c.offer.available_until <= c.now,
    ),
    (Rejection.NO_FX_RATE, lambda c: c.reference_price is None),
    (Rejection.PRICE_OUT_OF_BAND, _out_of_band),
)
"""Every check after the seller is known, in the order of ``Rejection``."""


def check_offer(
    offer: OfferFacts,
    *,
    sellers: Mapping[str, SellerView],
    gpus: Mapping[str, Band],
    reference_price: Decimal | None,
    now: datetime,
) -> Rejection | None:
    """The first reason to refuse the offer, or None when it may go to the book.

    ``reference_price`` is the offer's price in the reference currency, or None when
    no usable FX rate exists.
    """
    seller = sellers.get(offer.seller_id)
    if seller is None:
        return Rejection.SELLER_UNKNOWN
    case = _Case(offer, seller, gpus.get(offer.gpu), reference_price, now)
    for reason, fails in CHECKS:
        if fails(case):
            return reason
    return None
