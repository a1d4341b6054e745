"""Sellers' reliability in the quotes: the best ask's seller's counts, and per depth level the
summed counts of its distinct sellers and the lowest rate among them.

Each level's figures are checked against an independent count over the offers themselves,
after any offers at any prices by any sellers, whatever counts those sellers have (none, none
counted yet, or some).
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from gpux_contracts.money import Currency
from gpux_contracts.reliability import ReliabilityCounts
from gpux_pricing.domain.market import LiveOffer, Market
from gpux_pricing.domain.quotes import (
    best_ask_payload,
    counted,
    level_reliability,
    sellers_of,
)

from .quote_rates import NOW, RATES

SELLERS = [f"s{i}" for i in range(6)]


def leg(offer_id: str, seller_id: str, cents: int, gpus: int = 1) -> LiveOffer:
    price = Decimal(cents) / 100
    reference = RATES.reference_micros(price, Currency.EUR, NOW)
    return LiveOffer(
        offer_id, seller_id, "rtx-4090", "on_demand", None, price, Currency.EUR, gpus, reference
    )


def counts(ready: int, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


def test_a_level_counts_each_seller_once_and_shows_its_least_reliable_one() -> None:
    market = Market()
    market.upsert(leg("o1", "s1", 40, gpus=2))
    market.upsert(leg("o2", "s1", 40, gpus=3))  # the same seller again at the same price
    market.upsert(leg("o3", "s2", 40))
    market.upsert(leg("o4", "s3", 40))  # never counted
    market.upsert(leg("o5", "s2", 50))  # s2 again, one level up
    held = {"s1": counts(9, 1), "s2": counts(2, 0, 1)}
    quote = market.quotes("rtx-4090", "on_demand")[0]
    payload = best_ask_payload(quote, RATES, held, NOW)

    assert payload.best is not None
    assert (payload.best.offer_id, payload.best.seller_reliability) == ("o1", counts(9, 1))
    first, second = payload.depth
    assert first.gpus == 7
    assert first.reliability == counts(11, 1, 1)  # s1 once, s2, and s3 adds nothing
    assert first.min_reliability == Decimal("0.6666")  # s2: 2 of 3, rounded down
    assert (second.reliability, second.min_reliability) == (counts(2, 0, 1), Decimal("0.6666"))
    assert sellers_of(quote) == {"s1", "s2", "s3"}


def test_sellers_not_counted_yet_show_nothing() -> None:
    market = Market()
    market.upsert(leg("o1", "s1", 40))
    market.upsert(leg("o2", "s2", 40))
    quote = market.quotes("rtx-4090", "on_demand")[0]
    # s2 is held with nothing counted: the same as not held at all.
    for held in ({}, {"s2": counts(0)}):
        payload = best_ask_payload(quote, RATES, held, NOW)
        assert payload.best is not None
        assert payload.best.seller_reliability is None
        assert (payload.depth[0].reliability, payload.depth[0].min_reliability) == (None, None)
    assert level_reliability([], {"s1": counts(1)}) == (None, None)
    assert counted("s2", {"s2": counts(0)}) is None


held_counts = st.dictionaries(
    st.sampled_from(SELLERS),
    st.builds(counts, st.integers(0, 50), st.integers(0, 50), st.integers(0, 50)),
)
offer_rows = st.lists(
    st.tuples(st.sampled_from(SELLERS), st.integers(30, 36), st.integers(1, 4)), max_size=40
)


@given(offer_rows, held_counts)
def test_each_level_sums_its_distinct_sellers_counts_and_shows_their_lowest_rate(
    rows: list[tuple[str, int, int]], held: dict[str, ReliabilityCounts]
) -> None:
    market = Market()
    offers = [leg(f"o{i:03d}", seller, cents, gpus) for i, (seller, cents, gpus) in enumerate(rows)]
    for offer in offers:
        market.upsert(offer)
    sellers_at: dict[int, set[str]] = defaultdict(set)
    for offer in offers:
        sellers_at[offer.reference_micros].add(offer.seller_id)
    quote = market.quotes("rtx-4090", "on_demand")[0]
    payload = best_ask_payload(quote, RATES, held, NOW)

    assert len(payload.depth) == len(sellers_at)
    for level, price in zip(payload.depth, sorted(sellers_at), strict=True):
        rated = [held[s] for s in sellers_at[price] if s in held and held[s].total > 0]
        if not rated:
            assert (level.reliability, level.min_reliability) == (None, None)
            continue
        assert level.reliability == counts(
            sum(c.ready_in_time for c in rated),
            sum(c.failed for c in rated),
            sum(c.reclaimed for c in rated),
        )
        assert level.min_reliability == min(
            Decimal(c.ready_in_time * 10_000 // c.total) / 10_000 for c in rated
        )
    if quote.best is not None:
        assert payload.best is not None
        best_counts = held.get(quote.best.seller_id)
        shown = best_counts if best_counts is not None and best_counts.total else None
        assert payload.best.seller_reliability == shown


@given(st.lists(st.sampled_from(SELLERS), max_size=12), held_counts)
def test_a_seller_named_twice_counts_once(
    sellers: list[str], held: dict[str, ReliabilityCounts]
) -> None:
    assert level_reliability(sellers + sellers, held) == level_reliability(set(sellers), held)
