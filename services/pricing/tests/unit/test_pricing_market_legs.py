"""Offers sold in two tiers: one leg per tier's book, each at its tier's price and showing the
pool's free GPUs; an exhausted offer leaves every book and comes back when live again."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_devinfra.testing.payloads import GPU, offer_submitted
from gpux_pricing.domain.fx import RateTable
from gpux_pricing.domain.market import (
    LiveOffer,
    Market,
    Quote,
    free_on_book,
    legs_of,
    live_leg,
    live_legs,
    quotes_from_scratch,
    tiers_of,
)

from .quote_rates import NOW, RATES

ON_DEMAND, INTERRUPTIBLE = Tier.ON_DEMAND.value, Tier.INTERRUPTIBLE.value
TIERS = (ON_DEMAND, INTERRUPTIBLE)


def two_price(offer_id: str = "o1", price: str = "0.40", second: str = "0.25") -> OfferSubmitted:
    return offer_submitted(
        offer_id, price=price, interruptible_price_per_gpu_hour=Decimal(second), gpus=4
    )


def test_the_legs_of_each_kind_of_offer() -> None:
    assert legs_of(two_price()) == (
        (ON_DEMAND, Decimal("0.40")),
        (INTERRUPTIBLE, Decimal("0.25")),
    )
    assert legs_of(offer_submitted("o2", price="0.40")) == ((ON_DEMAND, Decimal("0.40")),)
    interruptible = offer_submitted("o3", price="0.20", tier=Tier.INTERRUPTIBLE)
    assert tiers_of(interruptible) == (INTERRUPTIBLE,)
    assert live_leg(interruptible, ON_DEMAND, 2, RATES, NOW) is None
    leg = live_leg(two_price(), INTERRUPTIBLE, 3, RATES, NOW)
    assert leg is not None
    # Priced in USD: 0.25 USD = 0.225 EUR, ranked in reference micros.
    assert (leg.tier, leg.price, leg.remaining, leg.reference_micros) == (
        INTERRUPTIBLE,
        Decimal("0.25"),
        3,
        225_000,
    )
    assert live_legs(two_price(), 1, RateTable.of(), NOW) == []  # no USD rate: unrankable


def test_what_the_book_reports_is_what_is_for_sale() -> None:
    assert free_on_book(OfferStatus.LIVE, 3) == 3
    assert free_on_book(OfferStatus.LIVE, 0) == 0
    for closed in (OfferStatus.EXHAUSTED, OfferStatus.WITHDRAWN, OfferStatus.EXPIRED):
        assert free_on_book(closed, 2) == 0


def best_and_depth(market: Market, tier: str) -> tuple[str | None, Decimal | None, list[int]]:
    quote = market.quotes(GPU, tier)[0]
    best = quote.best
    return (
        None if best is None else best.offer_id,
        None if best is None else best.price,
        [level.gpus for level in quote.depth],
    )


def test_a_two_price_offer_is_in_both_books_and_its_free_gpus_move_both() -> None:
    market = Market()
    offer = two_price()
    steps = [
        (OfferStatus.LIVE, 4, [4]),
        (OfferStatus.LIVE, 1, [1]),  # three GPUs leased
        (OfferStatus.EXHAUSTED, 0, []),  # every GPU leased: off both books
        (OfferStatus.LIVE, 3, [3]),  # a lease gave GPUs back: in both again
    ]
    for status, free, depth in steps:
        market.place(offer.offer_id, live_legs(offer, free_on_book(status, free), RATES, NOW))
        shown = "o1" if depth else None
        assert best_and_depth(market, ON_DEMAND) == (
            shown,
            Decimal("0.40") if depth else None,
            depth,
        )
        assert best_and_depth(market, INTERRUPTIBLE) == (
            shown,
            Decimal("0.25") if depth else None,
            depth,
        )
    assert {leg.tier for leg in market.legs("o1")} == set(TIERS)
    assert len(market) == 1  # one offer, two legs
    market.set_remaining("o1", 2)
    assert [leg.remaining for leg in market.legs("o1")] == [2, 2]
    assert market.remove("o1") == {(GPU, ON_DEMAND), (GPU, INTERRUPTIBLE)}
    assert market.legs("o1") == ()


def test_the_interruptible_book_ranks_both_kinds_of_offer_by_their_interruptible_price() -> None:
    market = Market()
    market.place("a", live_legs(two_price("a", "0.40", "0.20"), 2, RATES, NOW))
    single = offer_submitted("b", price="0.22", tier=Tier.INTERRUPTIBLE, currency=Currency.EUR)
    market.place("b", live_legs(single, 5, RATES, NOW))
    # a: 0.20 USD = 0.18 EUR beats b at 0.22 EUR; b is not sold on demand.
    assert best_and_depth(market, INTERRUPTIBLE) == ("a", Decimal("0.20"), [2, 5])
    assert best_and_depth(market, ON_DEMAND) == ("a", Decimal("0.40"), [2])


def test_loading_one_book_keeps_the_offers_other_legs() -> None:
    market = Market()
    offer = two_price()
    market.place("o1", live_legs(offer, 4, RATES, NOW))
    leg = live_leg(offer, INTERRUPTIBLE, 1, RATES, NOW)
    assert leg is not None
    market.load(GPU, INTERRUPTIBLE, [leg])
    assert [(leg.tier, leg.remaining) for leg in market.legs("o1")] == [
        (INTERRUPTIBLE, 1),
        (ON_DEMAND, 4),
    ]
    market.drop(GPU, INTERRUPTIBLE)
    assert [leg.tier for leg in market.legs("o1")] == [ON_DEMAND]
    market.drop(GPU, ON_DEMAND)
    assert len(market) == 0


def assert_quotes_equal_a_scan(market: Market, tier: str, legs: list[LiveOffer]) -> None:
    """Every region's quote of the book equals a linear scan of these legs (a region that
    emptied quotes nothing)."""
    incremental = {q.region: q for q in market.quotes(GPU, tier)}
    for quote in quotes_from_scratch(legs, GPU, tier, 1000):
        assert incremental.pop(quote.region) == quote
    for region, quote in incremental.items():
        assert quote == Quote(GPU, tier, region, None, 0, ())


OFFERS = [
    two_price("o0", "0.40", "0.25"),
    two_price("o1", "0.30", "0.30"),
    two_price("o2", "0.50", "0.10"),
    offer_submitted("o3", price="0.35", currency=Currency.EUR, region="eu-west"),
    offer_submitted("o4", price="0.20", tier=Tier.INTERRUPTIBLE, region="eu-west"),
    offer_submitted(
        "o5", price="0.45", currency=Currency.EUR, interruptible_price_per_gpu_hour="0.45"
    ),
]
statuses = st.sampled_from(
    [OfferStatus.LIVE, OfferStatus.LIVE, OfferStatus.EXHAUSTED, OfferStatus.WITHDRAWN]
)
reports = st.lists(
    st.tuples(st.integers(0, len(OFFERS) - 1), statuses, st.integers(0, 6)), max_size=50
)


@settings(max_examples=300)
@given(reports)
def test_each_tiers_depth_is_the_free_gpus_of_its_offers_after_any_reports(
    steps: list[tuple[int, OfferStatus, int]],
) -> None:
    market = Market(depth_levels=1000)
    free: dict[str, int] = {}
    for index, status, remaining in steps:
        offer = OFFERS[index]
        free[offer.offer_id] = free_on_book(status, remaining)
        market.place(offer.offer_id, live_legs(offer, free[offer.offer_id], RATES, NOW))
        for tier in TIERS:
            sold = [o for o in OFFERS if tier in tiers_of(o) and free.get(o.offer_id, 0) > 0]
            quote = market.quotes(GPU, tier)[0]
            assert sum(level.gpus for level in quote.depth) == sum(free[o.offer_id] for o in sold)
            legs = [live_leg(o, tier, free[o.offer_id], RATES, NOW) for o in sold]
            ranked = [leg for leg in legs if leg is not None]
            assert_quotes_equal_a_scan(market, tier, ranked)
            if ranked:
                assert quote.best is not None
                assert quote.best.reference_micros == min(leg.reference_micros for leg in ranked)
            else:
                assert quote.best is None
        assert len(market) == sum(1 for n in free.values() if n > 0)
