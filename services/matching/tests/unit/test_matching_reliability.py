"""Sellers' reliability in the engine: an order with a minimum fills only from pools whose
seller has a rate at least that high (unrated sellers never qualify), wherever the region is
checked; rates come in as a command of their own, in the snapshot and the log form."""

from __future__ import annotations

import json

import pytest

from gpux_matching.domain import (
    MatchingEngine,
    OrderStatus,
    PlaceOrder,
    Reason,
    Result,
    SetSellerReliability,
    apply,
    decode_command,
    encode_command,
)

from .engine_calls import ANY, EUR, INT, OD, S
from .engine_calls import bid as order
from .engine_calls import offer as pool

pytestmark = pytest.mark.unit


def engine(**rates_bp: int) -> MatchingEngine:
    """An engine in EUR whose sellers have these rates (basis points)."""
    e = MatchingEngine({EUR: 1_000_000})
    assert e.set_seller_reliability(rates_bp, now=0).rejection is None
    return e


def sellers(result: Result) -> list[tuple[str, int]]:
    """(seller, GPUs) of each trade, in order."""
    return [(f.seller_id, f.gpus) for f in result.fills]


# Taking offers ------------------------------------------------------------------------------


def test_an_order_with_a_minimum_passes_over_sellers_below_it_and_unrated_ones() -> None:
    e = engine(low=9_000, high=9_500)
    pool(e, "cheap", 1_000_000, 2, seller="low")
    pool(e, "unrated", 1_100_000, 2, seller="nobody")
    pool(e, "good", 1_200_000, 2, seller="high")

    result = order(e, "b", 3, 2_000_000, min_reliability_bp=9_500)

    assert sellers(result) == [("high", 2)]
    assert result.orders[-1].status == OrderStatus.PARTIALLY_FILLED
    # What it passed over stays on the book, and an order without a minimum takes it.
    assert sellers(order(e, "plain", 4, 2_000_000, buyer="u2", now=3)) == [
        ("low", 2),
        ("nobody", 2),
    ]


def test_an_unrated_seller_does_not_qualify_even_for_a_minimum_of_zero() -> None:
    e = engine(rated=0)
    pool(e, "unrated", 1_000_000, 1, seller="nobody")
    pool(e, "rated", 1_500_000, 1, seller="rated")
    assert sellers(order(e, "b", 2, 2_000_000, min_reliability_bp=0)) == [("rated", 1)]


def test_a_minimum_is_checked_when_an_any_order_meets_both_tiers_and_for_fok() -> None:
    e = engine(good=8_000, bad=7_999)
    pool(e, "bad-od", 1_000_000, 2, seller="bad")
    pool(e, "good-int", 1_500_000, 2, seller="good", tier=INT)
    pool(e, "good-od", 1_600_000, 1, seller="good")

    killed = order(e, "fok", 4, 2_000_000, time_in_force="fok", min_reliability_bp=8_000)
    assert killed.fills == ()
    assert killed.orders[-1].reason == Reason.FOK_UNFILLABLE

    taken = order(e, "any", 3, 2_000_000, tier=ANY, min_reliability_bp=8_000, now=3)
    assert [(f.offer_id, f.gpus) for f in taken.fills] == [("good-int", 2), ("good-od", 1)]


# Resting bids meeting offers ----------------------------------------------------------------


def test_a_resting_bid_with_a_minimum_is_filled_only_by_a_qualifying_sellers_offer() -> None:
    e = engine(low=5_000, high=9_000)
    order(e, "picky", 2, 2_000_000, min_reliability_bp=8_000)
    order(e, "plain", 2, 1_500_000, buyer="u2")

    low = pool(e, "low", 1_000_000, 4, seller="low", now=3)
    # The best bid (picky) is passed over; the next one takes the GPUs.
    assert [(f.order_id, f.gpus) for f in low.fills] == [("plain", 2)]
    assert e.order("picky") is not None

    high = pool(e, "high", 1_000_000, 4, seller="high", now=4)
    assert [(f.order_id, f.price_micros) for f in high.fills] == [("picky", 2_000_000)]
    assert e.order("picky") is None


def test_an_offer_meeting_bids_of_its_tier_and_any_checks_each_bids_minimum() -> None:
    e = engine(seller=6_000)
    order(e, "od", 1, 2_000_000, tier=OD, min_reliability_bp=6_001)
    order(e, "any", 1, 2_000_000, tier=ANY, buyer="u2", min_reliability_bp=6_000)
    result = pool(e, "p", 1_000_000, 4, now=3)
    assert [f.order_id for f in result.fills] == ["any"]
    assert e.order("od") is not None


def test_gpus_coming_back_meet_only_the_bids_whose_minimum_the_seller_meets() -> None:
    e = engine(seller=7_000)
    pool(e, "p", 1_000_000, 1)
    order(e, "first", 1, 1_000_000, buyer="u1")
    order(e, "picky", 1, 2_000_000, buyer="u2", min_reliability_bp=9_000, now=3)
    order(e, "plain", 1, 1_500_000, buyer="u3", now=4)
    back = e.release_lease("first:b1", "p", 1, now=5)
    assert [f.order_id for f in back.fills] == ["plain"]


# Preemption ---------------------------------------------------------------------------------


def test_an_on_demand_order_with_a_minimum_preempts_only_qualifying_sellers_pools() -> None:
    e = engine(shaky=4_000, solid=9_900)
    pool(e, "shaky", 2_000_000, 1, interruptible=1_000_000, seller="shaky", now=1)
    pool(e, "solid", 3_000_000, 1, interruptible=1_000_000, seller="solid", now=2)
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1", now=3)

    result = order(e, "od", 2, 3_000_000, tier=OD, buyer="u2", min_reliability_bp=9_000, now=4)

    assert [i.offer_id for i in result.interruptions] == ["solid"]
    assert [(f.offer_id, f.starts_at_micros) for f in result.fills] == [("solid", 4 + 120 * S)]
    assert result.orders[-1].status == OrderStatus.PARTIALLY_FILLED


# Rates as a command -------------------------------------------------------------------------


def test_a_rate_rising_to_a_resting_bids_minimum_fills_it_at_the_offers_price() -> None:
    e = engine(seller=7_000)
    pool(e, "p", 1_000_000, 2)
    order(e, "picky", 3, 2_000_000, min_reliability_bp=8_000, now=3)
    assert e.order("picky") is not None

    risen = e.set_seller_reliability({"seller": 8_000}, now=4)

    assert [(f.order_id, f.gpus, f.price_micros) for f in risen.fills] == [("picky", 2, 1_000_000)]
    assert risen.orders[-1].status == OrderStatus.PARTIALLY_FILLED
    assert e.reliability == {"seller": 8_000}


def test_a_rate_falling_below_a_minimum_keeps_later_orders_away() -> None:
    e = engine(seller=9_000)
    pool(e, "p", 1_000_000, 4)
    assert sellers(order(e, "before", 1, 2_000_000, min_reliability_bp=9_000)) == [("seller", 1)]
    fallen = e.set_seller_reliability({"seller": 8_999}, now=3)
    assert fallen.fills == ()
    assert order(e, "after", 1, 2_000_000, min_reliability_bp=9_000, now=4).fills == ()


def test_bad_rates_and_bad_minimums_are_refused() -> None:
    e = engine(seller=5_000)
    for bad in (-1, 10_001, True, "9000"):
        result = e.set_seller_reliability({"seller": 6_000, "other": bad}, now=1)
        assert result.rejection == Reason.INVALID_RELIABILITY
    assert e.reliability == {"seller": 5_000}  # nothing of a refused command is taken
    pool(e, "p", 1_000_000, 1)
    for minimum in (-1, 10_001):
        refused = order(e, f"b{minimum}", 1, 2_000_000, min_reliability_bp=minimum)
        assert refused.rejection == Reason.INVALID_MIN_RELIABILITY
        assert refused.orders[-1].status == OrderStatus.REJECTED


def test_invalid_hours_come_before_an_invalid_minimum() -> None:
    e = engine()
    refused = order(e, "b", 1, 2_000_000, hours=0, min_reliability_bp=10_001)
    assert refused.rejection == Reason.INVALID_HOURS


# Snapshot and log form ----------------------------------------------------------------------


def test_a_snapshot_keeps_the_rates_and_the_minimums_and_restores_the_same_behaviour() -> None:
    e = engine(seller=6_000, other=9_000)
    order(e, "picky", 2, 2_000_000, min_reliability_bp=8_000)
    snapshot = json.loads(json.dumps(e.snapshot()))
    assert snapshot["reliability"] == {"other": 9_000, "seller": 6_000}
    assert [b["min_reliability_bp"] for b in snapshot["orders"]] == [8_000]

    restored = MatchingEngine.restore(snapshot)
    assert restored.snapshot() == e.snapshot()
    for book in (e, restored):
        assert book.add_offer("p", "seller", "h100", OD, 1_000_000, EUR, 2, now=3).fills == ()
        assert [
            f.order_id for f in book.set_seller_reliability({"seller": 8_000}, now=4).fills
        ] == ["picky"]


def test_a_snapshot_from_before_reliability_restores_with_no_rates_and_no_minimums() -> None:
    e = engine()
    order(e, "b", 2, 2_000_000)
    old = e.snapshot()
    del old["reliability"]
    for bid in old["orders"]:
        del bid["min_reliability_bp"]
    restored = MatchingEngine.restore(old)
    assert restored.reliability == {}
    assert restored.snapshot()["orders"][0]["min_reliability_bp"] is None
    assert sellers(restored.add_offer("p", "nobody", "h100", OD, 1_000_000, EUR, 2, now=3)) == [
        ("nobody", 2)
    ]


def test_the_new_command_and_field_round_trip_and_old_orders_decode_without_a_minimum() -> None:
    rates = SetSellerReliability(5, {"s2": 10_000, "s1": 0})
    kind, body = encode_command(rates)
    assert (kind, json.loads(body)["rates_bp"]) == (
        "set_seller_reliability",
        {"s1": 0, "s2": 10_000},
    )
    assert decode_command(kind, body) == rates
    placed = PlaceOrder(6, "b1", "u1", "h100", 2, EUR, min_reliability_bp=9_500)
    assert decode_command(*encode_command(placed)) == placed
    old = json.loads(encode_command(placed)[1])
    del old["min_reliability_bp"]
    assert decode_command("place_order", old) == placed._replace(min_reliability_bp=None)
    e = engine()
    assert apply(e, rates).rejection is None
    assert e.reliability == {"s1": 0, "s2": 10_000}


# Totals: counts only grow -------------------------------------------------------------------


def test_a_rate_counted_over_fewer_leases_than_the_one_held_is_older_and_ignored() -> None:
    e = MatchingEngine({EUR: 1_000_000})
    e.set_seller_reliability({"s": 8_000}, now=1, totals={"s": 25})
    pool(e, "p", 1_000_000, 2, seller="s")
    order(e, "picky", 2, 2_000_000, min_reliability_bp=9_000, now=2)

    older = e.set_seller_reliability({"s": 9_500, "t": 9_000}, now=3, totals={"s": 20, "t": 1})

    assert older.rejection is None
    assert older.fills == ()  # s stays at 8,000: no fill
    assert e.reliability == {"s": 8_000, "t": 9_000}  # the other seller's rate is taken
    assert e.reliability_totals == {"s": 25, "t": 1}
    untotalled = e.set_seller_reliability({"s": 9_500}, now=4)  # no total: 0, fewer than 25
    assert untotalled.fills == ()
    assert e.reliability["s"] == 8_000
    # As many counted replaces (the contract's rule), and more counted too.
    assert e.set_seller_reliability({"s": 8_100}, now=5, totals={"s": 25}).fills == ()
    assert e.reliability["s"] == 8_100
    newer = e.set_seller_reliability({"s": 9_200}, now=6, totals={"s": 40})
    assert [f.order_id for f in newer.fills] == ["picky"]
    assert (e.reliability["s"], e.reliability_totals["s"]) == (9_200, 40)


def test_a_rate_held_without_a_total_is_replaced_by_any_rate() -> None:
    e = engine(s=9_000)  # no total given: 0
    assert e.reliability_totals == {}
    e.set_seller_reliability({"s": 4_000}, now=1)
    assert e.reliability == {"s": 4_000}
    e.set_seller_reliability({"s": 6_000}, now=2, totals={"s": 3})
    assert (e.reliability, e.reliability_totals) == ({"s": 6_000}, {"s": 3})


def test_bad_totals_are_refused_whole() -> None:
    e = engine(s=5_000)
    for totals in ({"s": -1}, {"s": True}, {"s": "3"}, {"other": 3}):
        result = e.set_seller_reliability({"s": 6_000}, now=1, totals=totals)
        assert result.rejection == Reason.INVALID_RELIABILITY
    assert (e.reliability, e.reliability_totals) == ({"s": 5_000}, {})


def test_totals_are_kept_by_snapshots_and_the_log_and_older_ones_read_as_none() -> None:
    e = MatchingEngine({EUR: 1_000_000})
    rates = SetSellerReliability(1, {"s": 8_000, "t": 9_000}, {"s": 25})
    assert apply(e, rates).rejection is None
    kind, body = encode_command(rates)
    assert json.loads(body)["totals"] == {"s": 25}
    assert decode_command(kind, body) == rates
    old = json.loads(body)
    del old["totals"]  # logged before totals were carried
    assert decode_command(kind, old) == rates._replace(totals=None)

    snapshot = json.loads(json.dumps(e.snapshot()))
    assert snapshot["reliability_totals"] == {"s": 25}
    restored = MatchingEngine.restore(snapshot)
    assert restored.snapshot() == e.snapshot()
    restored.set_seller_reliability({"s": 9_500}, now=2, totals={"s": 20})
    assert restored.reliability["s"] == 8_000
    del snapshot["reliability_totals"]  # taken before totals were kept: every total 0
    before = MatchingEngine.restore(snapshot)
    assert before.reliability_totals == {}
    before.set_seller_reliability({"s": 9_500}, now=2, totals={"s": 20})
    assert before.reliability["s"] == 9_500
