"""Which offers reach the book: checks and rejection reasons, in order of precedence."""

from __future__ import annotations

from collections.abc import Mapping
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
    if seller.status is not AccountStatus.ACTIVE or not seller.is_seller:
        return Rejection.SELLER_INACTIVE
    band = gpus.get(offer.gpu)
    if band is None:
        return Rejection.UNKNOWN_GPU
    if offer.currency not in Currency.__members__:
        return Rejection.UNSUPPORTED_CURRENCY
    if offer.price <= 0:
        return Rejection.PRICE_NOT_POSITIVE
    exponent = offer.price.as_tuple().exponent
    if isinstance(exponent, int) and -exponent > MAX_DECIMALS:
        return Rejection.PRICE_PRECISION
    if offer.available_until is not None and offer.available_until <= now:
        return Rejection.WINDOW_IN_PAST
    if reference_price is None:
        return Rejection.NO_FX_RATE
    if not band.low <= reference_price <= band.high:
        return Rejection.PRICE_OUT_OF_BAND
    return None
