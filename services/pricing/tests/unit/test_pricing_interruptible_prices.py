"""The interruptible price of an on-demand offer: held to the rules of every price, and never
above the offer's on-demand price; an interruptible offer has no second price."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.offers import Tier
from gpux_pricing.domain.validation import Band, OfferFacts, Rejection, SellerView, check_offer

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
SELLERS = {"s1": SellerView(AccountStatus.ACTIVE, True)}
BAND = Band(Decimal("0.05"), Decimal("10"))
BANDS = {"rtx-4090": BAND}


def facts(
    price: str = "0.40",
    interruptible: str | None = "0.25",
    *,
    tier: Tier = Tier.ON_DEMAND,
    available_until: datetime | None = None,
) -> OfferFacts:
    """An offer in EUR (the reference currency: its prices are their reference values)."""
    return OfferFacts(
        "s1",
        "rtx-4090",
        Decimal(price),
        "EUR",
        available_until,
        tier,
        None if interruptible is None else Decimal(interruptible),
    )


def verdict(offer: OfferFacts, *, rate: bool = True) -> Rejection | None:
    """``check_offer`` with the reference values an EUR offer has (none without a rate)."""
    return check_offer(
        offer,
        sellers=SELLERS,
        gpus=BANDS,
        reference_price=offer.price if rate else None,
        interruptible_reference_price=offer.interruptible_price if rate else None,
        now=NOW,
    )


@pytest.mark.parametrize(
    ("offer", "reason"),
    [
        (facts(), None),
        (facts(interruptible=None), None),  # one price: on demand only, as before
        (facts(interruptible="0.40"), None),  # at most the on-demand price: equal is allowed
        (facts("0.40", tier=Tier.INTERRUPTIBLE), Rejection.INTERRUPTIBLE_PRICE_NOT_ON_DEMAND),
        (facts("0.40", None, tier=Tier.INTERRUPTIBLE), None),
        (facts(interruptible="0"), Rejection.INTERRUPTIBLE_PRICE_NOT_POSITIVE),
        (facts(interruptible="-0.10"), Rejection.INTERRUPTIBLE_PRICE_NOT_POSITIVE),
        (facts(interruptible="0.12345"), Rejection.INTERRUPTIBLE_PRICE_PRECISION),
        (facts(interruptible="0.1234"), None),  # 4 decimals, as any price
        (facts(interruptible="0.41"), Rejection.INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND),
        (facts(interruptible="0.04"), Rejection.INTERRUPTIBLE_PRICE_OUT_OF_BAND),
        (facts("12", "11"), Rejection.PRICE_OUT_OF_BAND),  # the on-demand price first
    ],
)
def test_interruptible_price_checks(offer: OfferFacts, reason: Rejection | None) -> None:
    assert verdict(offer) is reason


def test_an_interruptible_price_needs_a_rate_as_the_price_does() -> None:
    assert verdict(facts(), rate=False) is Rejection.NO_FX_RATE
    # A rate for the price but none for the second price (never apart in one currency, but
    # an interruptible price that cannot be ranked never reaches the book).
    one_rate = check_offer(
        facts(),
        sellers=SELLERS,
        gpus=BANDS,
        reference_price=Decimal("0.40"),
        interruptible_reference_price=None,
        now=NOW,
    )
    assert one_rate is Rejection.NO_FX_RATE


def test_the_interruptible_checks_come_after_the_price_and_before_the_window() -> None:
    order = list(Rejection)
    first, last = order.index(Rejection.PRICE_PRECISION), order.index(Rejection.WINDOW_IN_PAST)
    assert order[first + 1 : last] == [
        Rejection.INTERRUPTIBLE_PRICE_NOT_ON_DEMAND,
        Rejection.INTERRUPTIBLE_PRICE_NOT_POSITIVE,
        Rejection.INTERRUPTIBLE_PRICE_PRECISION,
        Rejection.INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND,
    ]
    assert order[-1] is Rejection.INTERRUPTIBLE_PRICE_OUT_OF_BAND
    # An interruptible price above the on-demand one on an offer whose window has passed.
    past = facts(interruptible="0.50", available_until=NOW - timedelta(seconds=1))
    assert verdict(past) is Rejection.INTERRUPTIBLE_PRICE_ABOVE_ON_DEMAND
    # Too precise and above the on-demand price: precision is reported first.
    assert verdict(facts(interruptible="0.41234")) is Rejection.INTERRUPTIBLE_PRICE_PRECISION
    # Both prices out of band: the on-demand price is reported.
    assert verdict(facts("0.01", "0.01")) is Rejection.PRICE_OUT_OF_BAND


prices = st.decimals(min_value=Decimal("0.0001"), max_value=Decimal("20"), places=4)


@given(prices, prices)
def test_a_two_price_offer_is_accepted_exactly_when_both_prices_are_in_band_and_ordered(
    on_demand: Decimal, interruptible: Decimal
) -> None:
    offer = facts(str(on_demand), str(interruptible))
    in_band = BAND.low <= on_demand <= BAND.high and BAND.low <= interruptible <= BAND.high
    accepted = verdict(offer) is None
    assert accepted == (in_band and interruptible <= on_demand)
