"""Aggregated book levels: both sides, best first, by reference price, depth-limited."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpux_matching.domain import (
    AddOffer,
    BookLevel,
    CancelOrder,
    MatchingEngine,
    PlaceOrder,
    SetFx,
    apply,
    books_changed,
    reference_micros,
)

from .engine_calls import RATES

pytestmark = pytest.mark.unit


def offer(
    i: int, price: int, gpus: int, currency: str = "EUR", tier: str = "on_demand"
) -> AddOffer:
    return AddOffer(1, f"f{i}", f"seller-{i}", "h100", tier, price, currency, gpus)


def bid(
    i: int, price: int, gpus: int, tier: str = "on_demand", currency: str = "EUR"
) -> PlaceOrder:
    return PlaceOrder(1, f"b{i}", f"buyer-{i}", "h100", gpus, currency, "limit", price, tier)


def test_levels_group_offers_and_bids_by_reference_price_best_first() -> None:
    engine = MatchingEngine(RATES)
    for command in (
        offer(1, 2_000_000, 4),
        offer(2, 2_000_000, 2),
        offer(3, 3_000_000, 1),
        offer(4, 2_000_000, 8, "USD"),  # 1.80 EUR
        bid(5, 1_000_000, 3),
        bid(6, 1_500_000, 2, tier="any"),
        bid(7, 1_000_000, 1, tier="interruptible"),
    ):
        apply(engine, command)
    levels = engine.levels("h100", "on_demand")
    assert levels.asks == (
        BookLevel(1_800_000, 8, 1),
        BookLevel(2_000_000, 6, 2),
        BookLevel(3_000_000, 1, 1),
    )
    assert levels.bids == (BookLevel(1_500_000, 2, 1), BookLevel(1_000_000, 3, 1))
    interruptible = engine.levels("h100", "interruptible")
    assert interruptible.asks == ()
    assert interruptible.bids == (BookLevel(1_500_000, 2, 1), BookLevel(1_000_000, 1, 1))


def test_a_fill_reduces_and_removes_levels() -> None:
    engine = MatchingEngine(RATES)
    apply(engine, bid(1, 2_000_000, 4))
    apply(engine, offer(2, 1_500_000, 3))
    assert engine.levels("h100", "on_demand").bids == (BookLevel(2_000_000, 1, 1),)
    assert engine.levels("h100", "on_demand").asks == ()
    result = apply(engine, offer(3, 2_000_000, 5))
    levels = engine.levels("h100", "on_demand")
    assert levels.bids == ()
    assert levels.asks == (BookLevel(2_000_000, 4, 1),)
    assert books_changed(engine, offer(3, 0, 0), result) == [("h100", "on_demand")]


def test_depth_limits_each_side() -> None:
    engine = MatchingEngine(RATES)
    for i in range(30):
        apply(engine, offer(i, 1_000_000 + i * 10_000, 1))
        apply(engine, bid(100 + i, 500_000 - i * 10_000, 1))
    levels = engine.levels("h100", "on_demand", depth=5)
    assert [lv.price_micros for lv in levels.asks] == [1_000_000 + i * 10_000 for i in range(5)]
    assert [lv.price_micros for lv in levels.bids] == [500_000 - i * 10_000 for i in range(5)]
    assert len(engine.levels("h100", "on_demand").asks) == 20
    with pytest.raises(ValueError, match="depth"):
        engine.levels("h100", "on_demand", depth=0)


def test_unknown_books_are_empty() -> None:
    engine = MatchingEngine(RATES)
    assert engine.levels("a100", "on_demand").bids == ()
    assert engine.levels("a100", "on_demand").asks == ()


def test_an_any_bid_names_both_books_and_fx_names_every_book() -> None:
    engine = MatchingEngine(RATES)
    apply(engine, offer(1, 2_000_000, 1, tier="interruptible"))
    placed = bid(2, 1_000_000, 1, tier="any")
    assert books_changed(engine, placed, apply(engine, placed)) == [
        ("h100", "on_demand"),
        ("h100", "interruptible"),
    ]
    cancel = CancelOrder(2, "b2")
    assert set(books_changed(engine, cancel, apply(engine, cancel))) == {
        ("h100", "on_demand"),
        ("h100", "interruptible"),
    }
    fx = SetFx(3, {"USD": Decimal("950000")})
    assert books_changed(engine, fx, apply(engine, fx)) == [
        ("h100", "on_demand"),
        ("h100", "interruptible"),
    ]


@pytest.mark.parametrize(
    ("key", "micros"),
    [(0, 0), (1_499_999, 1), (1_500_000, 2), (2_500_000, 2), (2_500_001, 3), (10**12, 10**6)],
)
def test_reference_micros_round_half_even(key: int, micros: int) -> None:
    assert reference_micros(key) == micros
