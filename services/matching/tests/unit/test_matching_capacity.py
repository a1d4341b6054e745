"""Capacity in the engine (docs/CAPACITY.md): offers as pools sold in one or two legs, leases
that give GPUs back, preemption of interruptible leases by on-demand orders, reclaim."""

from __future__ import annotations

import json

import pytest

from gpux_contracts.capacity import InterruptionCause
from gpux_matching.domain import (
    BookLevel,
    Interruption,
    LeaseView,
    Level,
    LevelChange,
    MatchingEngine,
    OfferStatus,
    OfferUpdate,
    OrderStatus,
    PoolView,
    Reason,
    Result,
    Side,
)

from ..legacy_book import format_1_offer, format_1_snapshot
from .engine_calls import ANY, EUR, H100, INT, OD, S
from .engine_calls import bid as order
from .engine_calls import offer as pool

pytestmark = pytest.mark.unit


def engine() -> MatchingEngine:
    return MatchingEngine({EUR: 1_000_000})


def asks(e: MatchingEngine, tier: str) -> tuple[BookLevel, ...]:
    return e.levels(H100, tier).asks


def spot_interruption(
    gpus: int, cause: InterruptionCause, at: int, interrupt_at: int, taken_by: tuple[str, ...]
) -> Interruption:
    """The notice to u1 that its lease ``spot:b1`` of ``gpus`` GPUs of seller's pool p ends."""
    return Interruption(
        "spot:b1", "p", "u1", "seller", H100, gpus, cause, at, interrupt_at, taken_by
    )


def view(e: MatchingEngine, offer_id: str) -> PoolView:
    found = e.pool(offer_id)
    assert found is not None
    return found


def check_pool(e: MatchingEngine, offer_id: str) -> None:
    """leased + free == capacity, free >= 0, and the leases add up to what is leased."""
    p = view(e, offer_id)
    assert p.leased + p.free == p.capacity
    assert p.free >= 0
    held = sum(lease.gpus for lease in p.leases.values() if lease.starts_after is None)
    assert held + p.legacy == p.leased


# Pools and legs -----------------------------------------------------------------------------


def test_both_legs_show_the_same_free_gpus_and_every_fill_is_a_lease() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 4, interruptible=2_000_000)
    assert asks(e, OD) == (BookLevel(3_000_000, 4, 1),)
    assert asks(e, INT) == (BookLevel(2_000_000, 4, 1),)

    taken = order(e, "b1", 1, 2_000_000, tier=INT)

    (fill,) = taken.fills
    assert (fill.tier, fill.price_micros, fill.billing) == (INT, 2_000_000, "second")
    assert fill.starts_at_micros == fill.at_micros == 2
    assert asks(e, OD) == (BookLevel(3_000_000, 3, 1),)
    assert asks(e, INT) == (BookLevel(2_000_000, 3, 1),)
    assert set(taken.levels) == {
        LevelChange(Level(H100, OD, Side.ASK, EUR, 3_000_000), 3),
        LevelChange(Level(H100, INT, Side.ASK, EUR, 2_000_000), 3),
    }
    assert taken.offers == (OfferUpdate("p", OfferStatus.LIVE, 4, 1, 3, None),)
    assert view(e, "p") == PoolView(4, 1, 3, {"b1:b1": LeaseView(1, INT, None)})
    check_pool(e, "p")


def test_an_any_bid_over_both_legs_never_takes_more_than_the_free_gpus() -> None:
    e = engine()
    pool(e, "p", 2_000_000, 3, interruptible=2_000_000, seller="s1")  # one price, two legs
    pool(e, "q", 2_500_000, 2, interruptible=1_000_000, seller="s2")

    result = order(e, "b1", 10, None)

    assert [(f.offer_id, f.tier, f.gpus) for f in result.fills] == [
        ("q", INT, 2),  # the cheapest leg
        ("p", OD, 3),  # the same price as p's interruptible leg, and earlier
    ]
    assert [u.status for u in result.offers] == [OfferStatus.EXHAUSTED] * 2
    assert asks(e, OD) == asks(e, INT) == ()
    check_pool(e, "p")
    check_pool(e, "q")


def test_an_on_demand_fill_bills_as_the_offer_says_an_interruptible_one_per_second() -> None:
    e = engine()
    pool(e, "single", 2_000_000, 1, tier=INT, seller="s1", billing="hour")
    pool(e, "pair", 3_000_000, 2, interruptible=2_500_000, seller="s2", billing="hour")
    result = order(e, "b1", 4, None)
    assert [(f.offer_id, f.tier, f.billing) for f in result.fills] == [
        ("single", INT, "second"),
        ("pair", INT, "second"),
    ]
    # The "any" order got pair's interruptible leg (the cheaper): an on-demand order may
    # preempt that lease, and its trade bills as the offer says.
    on_demand = order(e, "b2", 1, None, tier=OD, now=3)
    assert [(f.offer_id, f.tier, f.billing) for f in on_demand.fills] == [("pair", OD, "hour")]
    assert [i.lease_id for i in on_demand.interruptions] == ["b1:b2"]


def test_an_exhausted_offer_is_kept_and_comes_back_behind_the_offers_at_its_price() -> None:
    e = engine()
    pool(e, "a", 2_000_000, 1, seller="s1")
    pool(e, "b", 2_000_000, 1, seller="s2", now=2)
    first = order(e, "x", 1, None, now=3)
    assert [f.offer_id for f in first.fills] == ["a"]
    assert e.offer("a") == OfferUpdate("a", OfferStatus.EXHAUSTED, 1, 1, 0, None)

    back = e.release_lease("x:b1", "a", 1, now=4)

    assert back.offers == (OfferUpdate("a", OfferStatus.LIVE, 1, 0, 1, None),)
    assert back.levels == (LevelChange(Level(H100, OD, Side.ASK, EUR, 2_000_000), 2),)
    assert [f.offer_id for f in order(e, "y", 1, None, now=5).fills] == ["b"]
    assert [f.offer_id for f in order(e, "z", 1, None, now=6).fills] == ["a"]


def test_gpus_back_on_an_offer_with_free_gpus_keep_its_place() -> None:
    e = engine()
    pool(e, "a", 2_000_000, 2, seller="s1")
    pool(e, "b", 2_000_000, 2, seller="s2", now=2)
    order(e, "x", 1, None, now=3)
    e.release_lease("x:b1", "a", 1, now=4)
    assert [(f.offer_id, f.gpus) for f in order(e, "y", 3, None, now=5).fills] == [
        ("a", 2),
        ("b", 1),
    ]


def test_returned_gpus_meet_on_demand_bids_first_then_interruptible_and_any() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 2, interruptible=2_000_000)
    order(e, "all", 2, 3_000_000, tier=OD, buyer="u0")
    order(e, "od", 1, 3_000_000, tier=OD, buyer="u1", now=3)
    order(e, "int", 1, 2_500_000, tier=INT, buyer="u2", now=4)
    order(e, "any", 1, 5_000_000, tier=ANY, buyer="u3", now=5)

    back = e.release_lease("all:b1", "p", 2, now=6)

    assert [(f.order_id, f.tier, f.price_micros, f.trade_id) for f in back.fills] == [
        ("od", OD, 3_000_000, "p:a1"),
        ("any", INT, 5_000_000, "p:a2"),  # the highest bid of the interruptible leg's two
    ]
    assert back.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 2, 2, 0, None),)
    assert e.order("int") is not None
    check_pool(e, "p")


def test_an_offer_without_an_interruptible_leg_meets_any_bids_with_its_on_demand_leg() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 1)
    order(e, "first", 1, 3_000_000, buyer="u0")
    order(e, "od", 1, 3_000_000, tier=OD, buyer="u1", now=3)
    order(e, "any", 1, 4_000_000, buyer="u2", now=4)
    back = e.release_lease("first:b1", "p", 1, now=5)
    assert [(f.order_id, f.tier) for f in back.fills] == [("any", OD)]


def test_a_release_the_book_does_not_know_changes_nothing() -> None:
    e = engine()
    pool(e, "p", 2_000_000, 2)
    order(e, "b1", 1, None)
    nothing = Result((), (), (), (), Reason.UNKNOWN_LEASE, ())
    assert e.release_lease("b1:b9", "p", 1, now=3) == nothing
    assert e.release_lease("b1:b1", "other", 1, now=3) == nothing
    assert e.release_lease("b1:b1", "p", 1, now=4).rejection is None
    assert e.release_lease("b1:b1", "p", 1, now=5) == nothing  # a replay
    assert view(e, "p").free == 2


# Preemption ---------------------------------------------------------------------------------


def test_an_on_demand_order_preempts_an_interruptible_lease_with_the_offers_notice() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 4, interruptible=1_000_000, notice_s=300)
    order(e, "spot", 4, 1_000_000, tier=INT, buyer="u1")

    result = order(e, "od", 3, 3_000_000, tier=OD, buyer="u2", now=10 * S)

    at = 10 * S + 300 * S
    assert result.interruptions == (
        spot_interruption(4, InterruptionCause.PREEMPTED, 10 * S, at, ("od:b1",)),
    )
    (fill,) = result.fills
    assert (fill.trade_id, fill.gpus, fill.tier, fill.price_micros) == ("od:b1", 3, OD, 3_000_000)
    assert (fill.at_micros, fill.starts_at_micros) == (10 * S, at)
    assert result.orders[-1].status == OrderStatus.FILLED
    assert result.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 4, 4, 0, None),)
    assert result.levels == ()
    assert view(e, "p").leases == {
        "spot:b1": LeaseView(4, INT, at),
        "od:b1": LeaseView(3, OD, None, "spot:b1"),
    }
    check_pool(e, "p")

    ended = e.release_lease("spot:b1", "p", 4, now=at)

    # The preempting trade holds 3 GPUs now; the one it did not take is free again.
    assert ended.offers == (OfferUpdate("p", OfferStatus.LIVE, 4, 3, 1, None),)
    assert view(e, "p").leases == {"od:b1": LeaseView(3, OD, None)}
    check_pool(e, "p")


def test_a_pool_whose_window_closes_before_the_notice_ends_is_not_preempted() -> None:
    e = engine()
    # Offered until 100 s: a 120 s notice from 10 s would end after the window.
    pool(e, "closing", 2_000_000, 2, interruptible=1_000_000, available_until=100 * S)
    pool(e, "open", 3_000_000, 2, interruptible=1_000_000, seller="s2")
    order(e, "spot", 4, 1_000_000, tier=INT, buyer="u1")

    result = order(e, "od", 2, 3_000_000, tier=OD, buyer="u2", now=10 * S)

    assert [i.offer_id for i in result.interruptions] == ["open"]
    assert [(f.offer_id, f.starts_at_micros) for f in result.fills] == [("open", 130 * S)]
    check_pool(e, "closing")
    check_pool(e, "open")


def test_preemption_takes_the_cheapest_on_demand_price_then_the_oldest_pool() -> None:
    e = engine()
    pool(e, "dear", 3_000_000, 1, interruptible=1_000_000, seller="s1", now=1)
    pool(e, "old", 2_000_000, 1, interruptible=1_000_000, seller="s2", now=2)
    pool(e, "new", 2_000_000, 1, interruptible=1_000_000, seller="s3", now=3)
    order(e, "spot", 3, 1_000_000, tier=INT, buyer="u1", now=4)
    result = order(e, "od", 3, 3_000_000, tier=OD, buyer="u2", now=5)
    assert [i.offer_id for i in result.interruptions] == ["old", "new", "dear"]
    assert [(f.offer_id, f.price_micros) for f in result.fills] == [
        ("old", 2_000_000),
        ("new", 2_000_000),
        ("dear", 3_000_000),
    ]


def test_within_a_pool_the_newest_lease_goes_first_and_never_one_already_interrupted() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 4, interruptible=1_000_000)
    for i in range(4):
        order(e, f"s{i}", 1, 1_000_000, tier=INT, buyer=f"u{i}", now=2 + i)
    first = order(e, "od1", 1, 3_000_000, tier=OD, buyer="x", now=10)
    second = order(e, "od2", 2, 3_000_000, tier=OD, buyer="x", now=11)
    assert [i.lease_id for i in first.interruptions] == ["s3:b1"]
    assert [i.lease_id for i in second.interruptions] == ["s2:b1", "s1:b1"]


def test_an_order_preempts_only_after_the_free_on_demand_gpus_within_its_limit() -> None:
    e = engine()
    pool(e, "free", 2_500_000, 1, seller="s1")
    pool(e, "dear", 4_000_000, 1, seller="s2")
    pool(e, "p", 3_000_000, 2, interruptible=1_000_000, seller="s3")
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    result = order(e, "od", 2, 3_000_000, tier=OD, buyer="u2", now=3)
    assert [(f.offer_id, f.starts_at_micros) for f in result.fills] == [
        ("free", 3),
        ("p", 3 + 120 * S),
    ]
    assert len(result.interruptions) == 1
    assert e.offer("dear") is not None


def test_no_preemption_above_the_limit_nor_for_interruptible_or_any_orders() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 1, interruptible=1_000_000)
    pool(e, "spot-only", 3_000_000, 1, tier=INT, seller="s2")
    order(e, "spot", 2, 3_000_000, tier=INT, buyer="u1")
    assert order(e, "low", 1, 2_999_999, tier=OD, buyer="u2", now=3).interruptions == ()
    assert order(e, "any", 1, 9_000_000, tier=ANY, buyer="u3", now=4).interruptions == ()
    assert order(e, "int", 1, 9_000_000, tier=INT, buyer="u4", now=5).interruptions == ()
    # An interruptible-only pool has no on-demand price: it is never preempted.
    market = order(e, "m", 2, None, tier=OD, buyer="u5", now=6)
    assert [i.offer_id for i in market.interruptions] == ["p"]


def test_preemption_follows_the_seller_region_and_minimum_hours_rules() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 1, interruptible=1_000_000, region="eu", min_hours=4)
    order(e, "spot", 1, 1_000_000, tier=INT, buyer="u1")
    assert order(e, "own", 1, None, tier=OD, buyer="seller", now=3).interruptions == ()
    assert order(e, "us", 1, None, tier=OD, buyer="u2", region="us", now=4).interruptions == ()
    assert order(e, "short", 1, None, tier=OD, buyer="u3", hours=2, now=5).interruptions == ()
    assert len(order(e, "ok", 1, None, tier=OD, buyer="u4", hours=4, now=6).interruptions) == 1


def test_fok_counts_preemptable_gpus() -> None:
    e = engine()
    pool(e, "free", 2_000_000, 1, seller="s1")
    pool(e, "p", 3_000_000, 3, interruptible=1_000_000, seller="s2")
    order(e, "spot", 3, 1_000_000, tier=INT, buyer="u1")
    killed = order(e, "big", 5, 3_000_000, tier=OD, buyer="u2", time_in_force="fok", now=3)
    assert (killed.fills, killed.interruptions) == ((), ())
    assert killed.orders[-1].reason == Reason.FOK_UNFILLABLE
    assert view(e, "free").free == 1
    filled = order(e, "fits", 4, 3_000_000, tier=OD, buyer="u2", time_in_force="fok", now=4)
    assert sum(f.gpus for f in filled.fills) == 4
    assert filled.orders[-1].status == OrderStatus.FILLED


def test_a_released_preempting_trade_drops_its_claim() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 2, interruptible=1_000_000)
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    order(e, "od", 2, 3_000_000, tier=OD, buyer="u2", now=3)

    dropped = e.release_lease("od:b1", "p", 2, now=4)

    assert dropped == Result((), (), (), (), None, ())
    assert view(e, "p").leases == {"spot:b1": LeaseView(2, INT, 3 + 120 * S)}
    ended = e.release_lease("spot:b1", "p", 2, now=5)
    assert ended.offers == (OfferUpdate("p", OfferStatus.LIVE, 2, 0, 2, None),)
    # A release of a preempting trade after its start is a release like any other.
    order(e, "spot2", 2, 1_000_000, tier=INT, buyer="u1", now=6)
    order(e, "od2", 2, 3_000_000, tier=OD, buyer="u2", now=7)
    e.release_lease("spot2:b1", "p", 2, now=8)
    assert e.release_lease("od2:b1", "p", 2, now=9).offers[-1].remaining == 2


def test_a_resting_on_demand_bid_never_preempts_later() -> None:
    e = engine()
    order(e, "od", 1, 2_000_000, tier=OD, buyer="u1", now=1)
    pool(e, "p", 3_000_000, 1, interruptible=1_000_000, now=2)  # above the bid's limit
    order(e, "spot", 1, 1_000_000, tier=INT, buyer="u2", now=3)
    assert e.change_offer("p", price_micros=2_000_000, now=4).interruptions == ()
    assert e.order("od") is not None
    back = e.release_lease("spot:b1", "p", 1, now=5)
    assert [(f.order_id, f.price_micros) for f in back.fills] == [("od", 2_000_000)]


def test_one_offer_update_per_offer_even_when_it_is_taken_and_preempted() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 3, interruptible=1_000_000)
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    result = order(e, "od", 3, 3_000_000, tier=OD, buyer="u2", now=3)
    assert [f.starts_at_micros for f in result.fills] == [3, 3 + 120 * S]
    assert result.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 3, 3, 0, None),)


# Reclaim ------------------------------------------------------------------------------------


def test_a_reclaim_interrupts_with_notice_and_the_capacity_shrinks_at_release() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 4, interruptible=1_000_000, notice_s=600)
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    order(e, "od", 1, 3_000_000, tier=OD, buyer="u2", now=3)

    reclaimed = e.reclaim_lease("p", "spot:b1", now=10)

    assert reclaimed.interruptions == (
        spot_interruption(2, InterruptionCause.RECLAIMED, 10, 10 + 600 * S, ()),
    )
    assert (reclaimed.fills, reclaimed.offers, reclaimed.rejection) == ((), (), None)
    assert e.reclaim_lease("p", "spot:b1", now=11).rejection == Reason.NOT_INTERRUPTIBLE
    assert e.reclaim_lease("p", "od:b1", now=11).rejection == Reason.NOT_INTERRUPTIBLE
    assert e.reclaim_lease("p", "nobody", now=11).rejection == Reason.UNKNOWN_LEASE
    assert e.reclaim_lease("q", "spot:b1", now=11).rejection == Reason.UNKNOWN_LEASE
    # A lease being reclaimed is not preempted: od2 takes the free GPU and rests for 1.
    od2 = order(e, "od2", 2, 3_000_000, tier=OD, buyer="u3", now=12)
    assert (od2.interruptions, od2.orders[-1].remaining) == ((), 1)

    ended = e.release_lease("spot:b1", "p", 2, now=10 + 600 * S)

    assert ended.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 2, 2, 0, None),)
    check_pool(e, "p")
    grown = e.change_offer("p", gpus=4, now=10 + 601 * S)  # the seller adds them again
    assert [(f.order_id, f.gpus) for f in grown.fills] == [("od2", 1)]
    assert grown.offers == (OfferUpdate("p", OfferStatus.LIVE, 4, 3, 1, None),)


# Changes, withdrawal, expiry ----------------------------------------------------------------


def test_a_capacity_below_what_is_leased_takes_effect_as_leases_end() -> None:
    e = engine()
    pool(e, "p", 2_000_000, 4)
    order(e, "a", 2, None, buyer="u1")
    order(e, "b", 1, None, buyer="u2", now=3)

    cut = e.change_offer("p", gpus=1, now=4)

    assert cut.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 3, 3, 0, None),)
    assert asks(e, OD) == ()
    first = e.release_lease("a:b1", "p", 2, now=5)  # both retired
    assert first.offers == (OfferUpdate("p", OfferStatus.EXHAUSTED, 1, 1, 0, None),)
    second = e.release_lease("b:b1", "p", 1, now=6)  # back within the new capacity
    assert second.offers == (OfferUpdate("p", OfferStatus.LIVE, 1, 0, 1, None),)
    check_pool(e, "p")


def test_a_cut_is_forgotten_when_the_capacity_is_raised_again() -> None:
    e = engine()
    pool(e, "p", 2_000_000, 4)
    order(e, "a", 3, None, buyer="u1")
    e.change_offer("p", gpus=1, now=3)
    assert e.change_offer("p", gpus=5, now=4).offers[-1][1:] == (
        OfferStatus.LIVE,
        5,
        3,
        2,
        None,
    )
    assert e.release_lease("a:b1", "p", 3, now=5).offers[-1].remaining == 5


def test_an_interruptible_leg_is_added_and_re_priced_each_leg_keeping_its_own_priority() -> None:
    e = engine()
    pool(e, "a", 3_000_000, 1, seller="s1", now=1)
    pool(e, "b", 3_000_000, 1, interruptible=2_000_000, seller="s2", now=2)
    added = e.change_offer("a", interruptible_price_micros=2_000_000, now=3)
    assert added.offers == (OfferUpdate("a", OfferStatus.LIVE, 1, 0, 1, None),)
    assert asks(e, INT) == (BookLevel(2_000_000, 2, 2),)
    # a's new leg rests behind b's; a's on-demand leg keeps its place ahead of b's.
    assert [f.offer_id for f in order(e, "i", 1, None, tier=INT, now=4).fills] == ["b"]
    e.release_lease("i:b1", "b", 1, now=5)
    assert [f.offer_id for f in order(e, "o", 1, None, tier=OD, now=6).fills] == ["a"]


def test_re_pricing_one_leg_leaves_the_other_in_place() -> None:
    e = engine()
    pool(e, "a", 3_000_000, 1, interruptible=2_000_000, seller="s1", now=1)
    pool(e, "b", 3_000_000, 1, interruptible=2_000_000, seller="s2", now=2)
    e.change_offer("a", interruptible_price_micros=1_500_000, now=3)
    e.change_offer("a", interruptible_price_micros=2_000_000, now=4)
    assert [f.offer_id for f in order(e, "o", 1, None, tier=OD, now=5).fills] == ["a"]
    assert [f.offer_id for f in order(e, "i", 1, None, tier=INT, now=6).fills] == ["b"]


def test_bad_interruptible_prices_in_a_change_are_refused() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 1, interruptible=2_000_000)
    pool(e, "q", 3_000_000, 1, tier=INT, seller="s2")
    assert e.change_offer("p", price_micros=1_999_999, now=2).rejection == Reason.INVALID_PRICE
    assert e.change_offer("p", interruptible_price_micros=3_000_001, now=2).rejection == (
        Reason.INVALID_PRICE
    )
    assert e.change_offer("q", interruptible_price_micros=1, now=2).rejection == (
        Reason.INVALID_PRICE
    )
    ok = e.change_offer("p", price_micros=1_000_000, interruptible_price_micros=900_000, now=3)
    assert ok.rejection is None
    assert asks(e, OD) == (BookLevel(1_000_000, 1, 1),)
    assert asks(e, INT) == (BookLevel(900_000, 1, 1), BookLevel(3_000_000, 1, 1))


def test_a_withdrawn_or_expired_pool_is_forgotten_and_its_releases_change_nothing() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 2, interruptible=1_000_000, seller="s1")
    pool(e, "q", 2_000_000, 1, seller="s2", available_until=100)
    order(e, "b", 1, None, tier=INT)
    order(e, "c", 1, None, tier=OD, now=3)  # takes q, the cheaper (exhausted, still kept)

    withdrawn = e.withdraw_offer("p", now=4)

    assert withdrawn.offers == (OfferUpdate("p", OfferStatus.WITHDRAWN, 2, 1, 0, None),)
    assert asks(e, OD) == asks(e, INT) == ()
    assert e.release_lease("b:b1", "p", 1, now=5).rejection == Reason.UNKNOWN_LEASE
    expired = e.expire(100)
    assert expired.offers == (OfferUpdate("q", OfferStatus.EXPIRED, 1, 1, 0, None),)
    assert expired.levels == ()
    assert e.release_lease("c:b1", "q", 1, now=101).rejection == Reason.UNKNOWN_LEASE
    assert e.counts() == (0, 0)


# Snapshots ----------------------------------------------------------------------------------


def test_a_snapshot_keeps_pools_leases_interruptions_and_claims() -> None:
    e = engine()
    pool(e, "p", 3_000_000, 3, interruptible=1_000_000, seller="s1", notice_s=200)
    pool(e, "q", 2_000_000, 2, seller="s2")
    order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    order(e, "od", 2, 3_000_000, tier=OD, buyer="u2", now=3)
    e.reclaim_lease("p", "od:b1", now=4)  # refused: on demand
    order(e, "spot2", 1, 1_000_000, tier=INT, buyer="u3", now=5)
    e.change_offer("q", gpus=1, now=6)

    snapshot = e.snapshot()
    assert snapshot["format"] == 2
    restored = MatchingEngine.restore(json.loads(json.dumps(snapshot)))
    assert restored.snapshot() == snapshot
    assert restored.pool("p") == e.pool("p")

    def follow(target: MatchingEngine) -> list[Result]:
        return [
            target.release_lease("spot:b1", "p", 2, now=10),
            target.reclaim_lease("p", "spot2:b1", now=11),
            order(target, "od2", 1, 3_000_000, tier=OD, buyer="u4", now=12),
            target.release_lease("spot2:b1", "p", 1, now=13),
            target.release_lease("od:b2", "q", 1, now=14),
        ]

    assert follow(restored) == follow(e)


def test_a_snapshot_of_format_1_restores_its_offers_as_pools_with_legacy_leases() -> None:
    old = format_1_snapshot(7, [format_1_offer("o1", "s1", H100, INT, 2_000_000, seq=5, taken=1)])
    e = MatchingEngine.restore(old)
    assert e.pool("o1") == PoolView(4, 3, 1, {}, legacy=3)
    assert asks(e, INT) == (BookLevel(2_000_000, 1, 1),)

    first = e.release_lease("old-lease", "o1", 2, now=10)
    assert first.offers == (OfferUpdate("o1", OfferStatus.LIVE, 4, 1, 3, None),)
    assert e.release_lease("old-lease", "o1", 2, now=11).rejection == Reason.UNKNOWN_LEASE
    assert e.release_lease("other", "o1", 5, now=12).offers[-1].remaining == 4  # up to legacy
    assert e.release_lease("third", "o1", 1, now=13).rejection == Reason.UNKNOWN_LEASE
    fill = order(e, "b", 1, None, now=14).fills[0]
    assert (fill.billing, fill.trade_id) == ("second", "b:b1")
    assert e.snapshot()["format"] == 2
