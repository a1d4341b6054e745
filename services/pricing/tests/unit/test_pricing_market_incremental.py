"""The incremental books against the linear scan, after any sequence of changes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpux_contracts.money import Currency
from gpux_contracts.prices import ALL_REGIONS
from gpux_contracts.reliability import ReliabilityCounts
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.domain.market import LiveOffer, Market, Quote, quotes_from_scratch
from gpux_pricing.domain.quotes import best_ask_payload, same_state
from gpux_pricing.domain.validation import CHECKS, Rejection

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
RATES = RateTable.of(
    Rate(Currency.USD, Currency.EUR, Decimal("0.90"), NOW),
    Rate(Currency.GBP, Currency.EUR, Decimal("1.20"), NOW),
)
BOOKS = [("rtx-4090", "on_demand"), ("rtx-4090", "interruptible"), ("h100-sxm", "on_demand")]
REGIONS = [None, "eu-west", "us-east", ALL_REGIONS]
DEPTH = 3  # fewer levels than offers, so the cut of the depth is exercised too


def live(
    oid: int, book: int, cents: int, currency: Currency, gpus: int, *, region: str | None
) -> LiveOffer:
    gpu, tier = BOOKS[book]
    price = Decimal(cents) / 100
    reference = RATES.reference_micros(price, currency, NOW)
    seller = f"s{oid % 4}"  # a few sellers, so that levels hold one or several of them
    return LiveOffer(f"o{oid:03d}", seller, gpu, tier, region, price, currency, gpus, reference)


upserts = st.builds(
    lambda *a, region: ("upsert", live(*a, region=region)),
    st.integers(0, 12),
    st.integers(0, len(BOOKS) - 1),
    st.integers(1, 60),
    st.sampled_from(list(Currency)),
    st.integers(0, 9),
    region=st.sampled_from(REGIONS),
)
removals = st.builds(lambda i: ("remove", f"o{i:03d}"), st.integers(0, 12))
fills = st.builds(lambda i, n: ("fill", (f"o{i:03d}", n)), st.integers(0, 12), st.integers(0, 9))
changes = st.lists(st.one_of(upserts, removals, fills), max_size=60)


def check_against_scan(market: Market, offers: dict[str, LiveOffer]) -> None:
    for gpu, tier in BOOKS:
        incremental = {q.region: q for q in market.quotes(gpu, tier)}
        scanned = quotes_from_scratch(offers.values(), gpu, tier, DEPTH)
        for quote in scanned:
            assert incremental.pop(quote.region) == quote
        # A region the book held offers in before, and holds none in now, quotes nothing.
        for region, quote in incremental.items():
            assert quote == Quote(gpu, tier, region, None, 0, ())


@settings(max_examples=300)
@given(changes)
def test_incremental_quotes_equal_a_linear_scan_after_every_change(
    steps: list[tuple[str, object]],
) -> None:
    market = Market(depth_levels=DEPTH)
    offers: dict[str, LiveOffer] = {}
    for kind, arg in steps:
        if kind == "upsert":
            assert isinstance(arg, LiveOffer)
            market.upsert(arg)
            offers[arg.offer_id] = arg
        elif kind == "remove":
            assert isinstance(arg, str)
            market.remove(arg)
            offers.pop(arg, None)
        else:
            assert isinstance(arg, tuple)
            offer_id, left = arg
            market.set_remaining(offer_id, left)
            if offer_id in offers:
                offers[offer_id] = replace(offers[offer_id], remaining=left)
        offers = {k: o for k, o in offers.items() if o.remaining > 0}
        check_against_scan(market, offers)
        assert len(market) == len(offers)
        assert {o.offer_id for o in market.offers()} == set(offers)


def test_a_book_loaded_again_holds_exactly_what_it_is_given() -> None:
    market = Market(depth_levels=DEPTH)
    market.upsert(live(1, 0, 40, Currency.EUR, 2, region="eu-west"))
    market.upsert(live(2, 0, 30, Currency.EUR, 1, region=None))
    fresh = live(3, 0, 50, Currency.USD, 4, region=None)
    market.load("rtx-4090", "on_demand", [fresh])
    assert market.legs("o001") == ()
    assert market.legs("o002") == ()
    assert [q.region for q in market.quotes("rtx-4090", "on_demand")] == [ALL_REGIONS]
    assert market.quotes("rtx-4090", "on_demand")[0].best == fresh
    market.drop("rtx-4090", "on_demand")
    assert len(market) == 0


def test_quotes_that_differ_only_in_time_are_the_same_state() -> None:
    market = Market()
    market.upsert(live(1, 0, 40, Currency.USD, 2, region=None))
    quote = market.quotes("rtx-4090", "on_demand")[0]
    now = best_ask_payload(quote, RATES, {}, NOW)
    later = best_ask_payload(quote, RATES, {}, datetime(2026, 11, 30, tzinfo=UTC))
    assert same_state(later, now)
    assert not same_state(now, None)
    market.set_remaining("o001", 1)
    fewer = best_ask_payload(market.quotes("rtx-4090", "on_demand")[0], RATES, {}, NOW)
    assert not same_state(fewer, now)
    moved = RATES.with_rate(Rate(Currency.USD, Currency.EUR, Decimal("0.95"), NOW))
    assert not same_state(best_ask_payload(quote, moved, {}, NOW), now)
    counted = {"s1": ReliabilityCounts(ready_in_time=1)}
    assert not same_state(best_ask_payload(quote, RATES, counted, NOW), now)


def test_the_checks_run_in_the_documented_order_of_rejections() -> None:
    # SELLER_UNKNOWN comes first, before any check can look at the seller.
    assert [reason for reason, _ in CHECKS] == list(Rejection)[1:]
