"""Focused examples of the matching engine's rules (the property tests cover random streams)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from gpux_matching.domain import (
    Level,
    LevelChange,
    MatchingEngine,
    OfferStatus,
    OfferUpdate,
    OrderStatus,
    OrderUpdate,
    Reason,
    Result,
    Side,
    epoch_micros,
)

from .engine_calls import EUR, H100, bid, offer

pytestmark = pytest.mark.unit

USD, GBP = "USD", "GBP"
RATES = {EUR: 1_000_000, USD: 900_000, GBP: 1_150_000}  # reference micros per unit


def engine() -> MatchingEngine:
    return MatchingEngine(RATES)


def test_market_bid_for_8_takes_4_plus_4_from_the_two_cheapest_at_their_prices() -> None:
    e = engine()
    offer(e, "o-dear", 2_500_000, seller="s1")
    offer(e, "o-cheap", 2_000_000, seller="s2")
    offer(e, "o-mid", 2_100_000, seller="s3")

    result = bid(e, "b1", 8, None, order_type="market")

    assert [(f.offer_id, f.gpus, f.price_micros, f.currency) for f in result.fills] == [
        ("o-cheap", 4, 2_000_000, EUR),
        ("o-mid", 4, 2_100_000, EUR),
    ]
    assert [f.trade_id for f in result.fills] == ["b1:b1", "b1:b2"]
    assert {(f.buyer_id, f.seller_id) for f in result.fills} == {("buyer", "s2"), ("buyer", "s3")}
    assert result.orders[-1].status == OrderStatus.FILLED
    assert [u.status for u in result.offers] == [OfferStatus.EXHAUSTED, OfferStatus.EXHAUSTED]
    assert e.offer("o-dear") is not None
    # An exhausted offer stays in the book's keeping (its leases will give GPUs back) but
    # shows no GPU on the book.
    assert e.offer("o-cheap") == OfferUpdate("o-cheap", OfferStatus.EXHAUSTED, 4, 4, 0, None)
    assert [(c.level.price_micros, c.gpus) for c in e.depth(H100, "on_demand", Side.ASK)] == [
        (2_500_000, 4)
    ]


def test_limit_below_best_ask_rests_then_fills_at_its_own_price_when_a_cheaper_offer_comes() -> (
    None
):
    e = engine()
    offer(e, "o1", 3_000_000)
    rested = bid(e, "b1", 2, 2_500_000, hours=4)
    assert rested.fills == ()
    assert rested.orders[-1].status == OrderStatus.OPEN
    assert rested.levels == (LevelChange(Level(H100, "any", Side.BID, EUR, 2_500_000), 2),)

    taken = offer(e, "o2", 2_400_000, gpus=3, seller="s2", now=3, billing="second")

    (fill,) = taken.fills
    # The resting bid sets the price; the offer's billing and the order's hours travel along.
    assert (fill.order_id, fill.offer_id, fill.gpus, fill.price_micros) == (
        "b1",
        "o2",
        2,
        2_500_000,
    )
    assert (fill.billing, fill.hours, fill.taker, fill.trade_id) == ("second", 4, Side.ASK, "o2:a1")
    assert taken.orders[-1].status == OrderStatus.FILLED
    assert taken.offers[-1][1:] == (OfferStatus.LIVE, 3, 2, 1, None)


def test_cancel_releases_the_remainder() -> None:
    e = engine()
    offer(e, "o1", 2_000_000, gpus=3)
    first = bid(e, "b1", 5, 2_200_000)
    assert first.orders[-1].status == OrderStatus.PARTIALLY_FILLED
    assert first.orders[-1].remaining == 2

    cancelled = e.cancel_order("b1", now=3)

    (update,) = cancelled.orders
    assert (update.status, update.filled, update.remaining, update.cancelled) == (
        OrderStatus.CANCELLED,
        3,
        0,
        2,
    )
    assert update.reason == Reason.CANCEL_REQUESTED
    assert cancelled.levels == (LevelChange(Level(H100, "any", Side.BID, EUR, 2_200_000), 0),)
    assert e.order("b1") is None
    assert e.cancel_order("b1", now=4).rejection == Reason.UNKNOWN_ORDER


def test_gtd_order_expires_by_itself_before_a_later_offer_can_fill_it() -> None:
    e = engine()
    bid(e, "b1", 2, 2_000_000, time_in_force="gtd", expires_at=100, now=10)
    assert e.expire(99).orders == ()

    late = offer(e, "o1", 1_900_000, now=100)

    assert late.fills == ()
    assert late.orders == (OrderUpdate("b1", OrderStatus.EXPIRED, 2, 0, 0, 2, None),)
    assert late.offers[-1].status == OfferStatus.LIVE


def test_expire_removes_offers_past_available_until() -> None:
    e = engine()
    offer(e, "o1", 2_000_000, available_until=50)
    result = e.expire(50)
    assert [(u.offer_id, u.status) for u in result.offers] == [("o1", OfferStatus.EXPIRED)]
    assert result.levels[0].gpus == 0
    assert bid(e, "b1", 1, None, order_type="market", now=51).fills == ()


def test_offers_in_other_currencies_rank_by_reference_value_and_trade_in_their_own() -> None:
    e = engine()
    offer(e, "eur", 2_000_000, currency=EUR, seller="s1")  # 2.000 ref
    offer(e, "usd", 2_100_000, currency=USD, seller="s2")  # 1.890 ref: cheapest
    offer(e, "gbp", 1_800_000, currency=GBP, seller="s3")  # 2.070 ref: dearest

    result = bid(e, "b1", 12, 2_100_000, currency=EUR)  # limit 2.100 ref reaches all three

    assert [(f.offer_id, f.price_micros, f.currency) for f in result.fills] == [
        ("usd", 2_100_000, USD),
        ("eur", 2_000_000, EUR),
        ("gbp", 1_800_000, GBP),
    ]


def test_a_limit_in_one_currency_stops_at_offers_worth_more_in_reference() -> None:
    e = engine()
    offer(e, "gbp", 1_800_000, gpus=1, currency=GBP)  # 2.070 ref
    result = bid(e, "b1", 1, 2_300_000, currency=USD)  # 2.070 ref: reaches it exactly
    assert [f.offer_id for f in result.fills] == ["gbp"]
    offer(e, "gbp2", 1_800_001, currency=GBP, now=3)
    assert bid(e, "b2", 1, 2_300_000, currency=USD, now=4).fills == ()


def test_an_fx_move_fills_a_resting_bid_that_now_reaches_an_offer() -> None:
    e = engine()
    offer(e, "usd", 2_200_000, currency=USD)  # 1.980 ref
    assert bid(e, "b1", 2, 1_900_000, currency=EUR).fills == ()

    result = e.set_fx({USD: Decimal("850000.5")}, now=5)  # now 1.870 ref: under the bid

    (fill,) = result.fills
    assert (fill.offer_id, fill.order_id, fill.price_micros, fill.currency) == (
        "usd",
        "b1",
        2_200_000,
        USD,
    )
    assert (fill.taker, fill.at_micros) == (Side.BID, 5)
    assert e.rates[USD] == Decimal("850000.5")
    assert e.set_fx({USD: 0}, now=6).rejection == Reason.INVALID_FX_RATE


def test_fok_fills_everything_or_nothing() -> None:
    e = engine()
    offer(e, "o1", 2_000_000, gpus=3)
    killed = bid(e, "b1", 4, 2_500_000, time_in_force="fok")
    assert killed.fills == ()
    assert killed.orders[-1].status == OrderStatus.CANCELLED
    assert killed.orders[-1].reason == Reason.FOK_UNFILLABLE
    assert e.offer("o1") == OfferUpdate("o1", OfferStatus.LIVE, 3, 0, 3, None)

    filled = bid(e, "b2", 3, 2_500_000, time_in_force="fok", now=3)
    assert sum(f.gpus for f in filled.fills) == 3
    assert filled.orders[-1].status == OrderStatus.FILLED


def test_ioc_and_market_remainders_never_rest() -> None:
    e = engine()
    offer(e, "o1", 2_000_000, gpus=1)
    ioc = bid(e, "b1", 3, 2_500_000, time_in_force="ioc")
    assert ioc.orders[-1][1:] == (OrderStatus.CANCELLED, 3, 1, 0, 2, Reason.UNFILLED_REMAINDER)
    market = bid(e, "b2", 2, None, order_type="market", now=3)
    assert market.orders[-1].status == OrderStatus.CANCELLED
    assert market.fills == ()
    assert e.counts() == (0, 0)  # nothing rests; the exhausted offer is kept, not live
    assert e.offer("o1") == OfferUpdate("o1", OfferStatus.EXHAUSTED, 1, 1, 0, None)


def test_market_cap_limits_what_a_market_order_takes() -> None:
    e = engine()
    offer(e, "o1", 2_000_000, gpus=1, seller="s1")
    offer(e, "o2", 3_000_000, gpus=1, seller="s2")
    result = bid(e, "b1", 2, 2_500_000, order_type="market")
    assert [f.offer_id for f in result.fills] == ["o1"]
    assert result.orders[-1].reason == Reason.UNFILLED_REMAINDER


def test_minimum_hours_region_and_own_offers_are_skipped_but_stay() -> None:
    e = engine()
    offer(e, "self", 1_000_000, gpus=1, seller="buyer")
    offer(e, "long", 1_100_000, gpus=1, seller="s1", min_hours=24)
    offer(e, "us", 1_200_000, gpus=1, seller="s2", region="us-east")
    offer(e, "eu", 1_300_000, gpus=1, seller="s3", region="eu-west")

    result = bid(e, "b1", 2, 2_000_000, hours=8, region="eu-west")

    assert [f.offer_id for f in result.fills] == ["eu"]
    assert all(e.offer(i) is not None for i in ("self", "long", "us"))
    open_ended = bid(e, "b2", 3, 2_000_000, buyer="b", now=3)  # no hours: any minimum fits
    assert [f.offer_id for f in open_ended.fills] == ["self", "long", "us"]


def test_an_offer_skips_bids_it_may_not_fill() -> None:
    e = engine()
    bid(e, "short", 1, 3_000_000, buyer="x", hours=1)
    bid(e, "mine", 1, 2_900_000, buyer="seller")
    bid(e, "ok", 1, 2_000_000, buyer="y")
    result = offer(e, "o1", 1_500_000, gpus=3, min_hours=2, now=3)
    assert [(f.order_id, f.price_micros) for f in result.fills] == [("ok", 2_000_000)]


def test_tier_any_sees_both_tiers_in_one_price_time_sequence() -> None:
    e = engine()
    offer(e, "od", 2_000_000, gpus=1, seller="s1", tier="on_demand", now=1)
    offer(e, "int", 2_000_000, gpus=1, seller="s2", tier="interruptible", now=2)
    offer(e, "int-cheap", 1_500_000, gpus=1, seller="s3", tier="interruptible", now=3)
    only_od = bid(e, "b1", 3, 2_000_000, tier="on_demand", time_in_force="ioc", now=4)
    assert [f.offer_id for f in only_od.fills] == ["od"]

    offer(e, "od2", 2_000_000, gpus=1, seller="s4", tier="on_demand", now=5)
    both = bid(e, "b2", 3, 2_000_000, tier="any", now=6)
    assert [(f.offer_id, f.tier) for f in both.fills] == [
        ("int-cheap", "interruptible"),
        ("int", "interruptible"),  # same price as od2, but earlier
        ("od2", "on_demand"),
    ]


def test_a_new_offer_meets_any_bids_and_its_own_tier_by_price_then_time() -> None:
    e = engine()
    bid(e, "any-early", 1, 2_000_000, tier="any", buyer="a", now=1)
    bid(e, "od-late", 1, 2_000_000, tier="on_demand", buyer="b", now=2)
    bid(e, "int", 1, 9_000_000, tier="interruptible", buyer="c", now=3)
    bid(e, "od-high", 1, 2_100_000, tier="on_demand", buyer="d", now=4)
    result = offer(e, "o1", 1_000_000, gpus=5, now=5)
    assert [f.order_id for f in result.fills] == ["od-high", "any-early", "od-late"]


def test_price_change_loses_priority_and_quantity_cut_keeps_it() -> None:
    e = engine()
    offer(e, "first", 2_000_000, gpus=2, seller="s1", now=1)
    offer(e, "second", 2_000_000, gpus=2, seller="s2", now=2)
    e.change_offer("first", gpus=1, now=3)  # keeps its place
    assert [f.offer_id for f in bid(e, "b1", 1, None, order_type="market", now=4).fills] == [
        "first"
    ]

    offer(e, "third", 2_000_000, gpus=2, seller="s3", now=5)
    e.change_offer("second", price_micros=1_900_000, now=6)
    e.change_offer("second", price_micros=2_000_000, now=7)  # back, but now behind third
    fills = bid(e, "b2", 2, None, order_type="market", now=8).fills
    assert [f.offer_id for f in fills] == ["third"]


def test_quantity_increase_loses_priority() -> None:
    e = engine()
    offer(e, "a", 2_000_000, gpus=1, seller="s1", now=1)
    offer(e, "b", 2_000_000, gpus=1, seller="s2", now=2)
    e.change_offer("a", gpus=3, now=3)
    assert [f.offer_id for f in bid(e, "x", 1, None, order_type="market", now=4).fills] == ["b"]


def test_a_cheaper_price_fills_waiting_bids_and_a_count_at_or_below_sold_exhausts() -> None:
    e = engine()
    offer(e, "o1", 3_000_000, gpus=4)
    bid(e, "b1", 1, 2_500_000)
    cut = e.change_offer("o1", price_micros=2_400_000, now=3)
    assert [(f.order_id, f.price_micros, f.trade_id) for f in cut.fills] == [
        ("b1", 2_500_000, "o1:a1")
    ]
    assert cut.offers[-1][1:] == (OfferStatus.LIVE, 4, 1, 3, None)

    ended = e.change_offer("o1", gpus=1, now=4)
    assert ended.offers[-1][1:] == (OfferStatus.EXHAUSTED, 1, 1, 0, None)
    assert ended.levels == (LevelChange(Level(H100, "on_demand", Side.ASK, EUR, 2_400_000), 0),)
    assert e.offer("o1") == OfferUpdate("o1", OfferStatus.EXHAUSTED, 1, 1, 0, None)
    # Kept, so a higher count puts it back on the book (behind what rests at its price).
    back = e.change_offer("o1", gpus=5, now=5)
    assert back.offers == (OfferUpdate("o1", OfferStatus.LIVE, 5, 1, 4, None),)
    assert back.levels == (LevelChange(Level(H100, "on_demand", Side.ASK, EUR, 2_400_000), 4),)
    e.withdraw_offer("o1", now=6)
    assert e.change_offer("o1", gpus=5, now=7).rejection == Reason.UNKNOWN_OFFER


def test_withdraw_takes_the_offer_off_the_book() -> None:
    e = engine()
    offer(e, "o1", 2_000_000)
    result = e.withdraw_offer("o1", now=2)
    assert result.offers[-1].status == OfferStatus.WITHDRAWN
    assert e.depth(H100, "on_demand", Side.ASK) == []
    assert e.withdraw_offer("o1", now=3).rejection == Reason.UNKNOWN_OFFER


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"gpus": 0, "currency": "CHF"}, Reason.INVALID_QUANTITY),  # precedence: quantity first
        ({"tier": "spot"}, Reason.INVALID_TIER),
        ({"order_type": "stop"}, Reason.INVALID_ORDER_TYPE),
        ({"time_in_force": "day"}, Reason.INVALID_TIME_IN_FORCE),
        ({"price_micros": None}, Reason.MISSING_PRICE),
        ({"price_micros": 0}, Reason.INVALID_PRICE),
        ({"currency": "CHF"}, Reason.UNKNOWN_CURRENCY),
        ({"hours": 0}, Reason.INVALID_HOURS),
        ({"time_in_force": "gtd"}, Reason.MISSING_EXPIRY),
        ({"time_in_force": "gtd", "expires_at": 2}, Reason.EXPIRED_ON_ARRIVAL),
    ],
)
def test_orders_are_rejected_with_the_first_reason_that_applies(
    kwargs: dict[str, object], reason: Reason
) -> None:
    e = engine()
    args: dict[str, object] = {"gpus": 1, "currency": EUR, "price_micros": 1_000_000}
    args.update(kwargs)
    gpus = args.pop("gpus")
    result = e.place_order("b1", "buyer", H100, gpus, now=2, **args)  # type: ignore[arg-type]
    assert result.rejection == reason
    assert result.orders[-1].status == OrderStatus.REJECTED
    assert result.orders[-1].cancelled == gpus


def test_duplicate_ids_and_bad_offers_are_rejected() -> None:
    e = engine()
    offer(e, "o1", 2_000_000)
    assert offer(e, "o1", 2_000_000).rejection == Reason.DUPLICATE_ID
    assert offer(e, "o2", 2_000_000, tier="any").rejection == Reason.INVALID_TIER
    assert offer(e, "o3", -1).rejection == Reason.INVALID_PRICE
    assert offer(e, "o4", 1, currency="CHF").rejection == Reason.UNKNOWN_CURRENCY
    assert offer(e, "o5", 1, min_hours=0).rejection == Reason.INVALID_HOURS
    assert offer(e, "o6", 1, available_until=1).rejection == Reason.EXPIRED_ON_ARRIVAL
    assert e.change_offer("o1", gpus=0, now=2).rejection == Reason.INVALID_QUANTITY
    bid(e, "b1", 1, 1_000_000)
    assert bid(e, "b1", 1, 1_000_000).rejection == Reason.DUPLICATE_ID


def test_aware_datetimes_and_epoch_micros_are_the_same_instant() -> None:
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    micros = epoch_micros(at)
    assert epoch_micros(at + timedelta(microseconds=1)) == micros + 1
    e = engine()
    offer(e, "o1", 2_000_000, now=micros, available_until=at + timedelta(hours=1))
    assert e.expire(at + timedelta(hours=1)).offers[0].status == OfferStatus.EXPIRED
    with pytest.raises(TypeError):
        e.expire(datetime(2026, 3, 1))


def test_the_same_commands_give_the_same_results_and_trade_ids() -> None:
    def run() -> list[Result]:
        e = engine()
        return [
            offer(e, "o1", 2_000_000, seller="s1"),
            offer(e, "o2", 2_100_000, seller="s2"),
            bid(e, "b1", 6, 2_100_000),
            bid(e, "b2", 6, 2_200_000, now=3),
            offer(e, "o3", 2_000_000, gpus=10, seller="s3", now=4),
        ]

    assert run() == run()


def test_depth_aggregates_levels_best_first() -> None:
    e = engine()
    offer(e, "a", 2_000_000, gpus=1, seller="s1")
    offer(e, "b", 2_000_000, gpus=2, seller="s2")
    offer(e, "c", 1_000_000, gpus=1, currency=USD, seller="s3")
    levels = e.depth(H100, "on_demand", Side.ASK)
    assert [(c.level.currency, c.level.price_micros, c.gpus) for c in levels] == [
        (USD, 1_000_000, 1),
        (EUR, 2_000_000, 3),
    ]


def test_snapshot_is_plain_json_and_restores_the_same_behaviour() -> None:
    e = engine()
    e.set_fx({USD: Decimal("912345.25")}, now=0)
    offer(e, "o1", 2_000_000, seller="s1", available_until=100, region="eu", min_hours=2)
    offer(e, "o2", 2_000_000, currency=USD, seller="s2", tier="interruptible")
    bid(e, "b1", 3, 1_000_000, time_in_force="gtd", expires_at=50, hours=4)
    bid(e, "b2", 2, 1_500_000, buyer="b2", tier="any")
    e.change_offer("o2", price_micros=1_600_000, now=3)  # a taker fill: o2's counter moves on

    snapshot = e.snapshot()
    restored = MatchingEngine.restore(json.loads(json.dumps(snapshot)))

    assert restored.snapshot() == snapshot

    def follow(target: MatchingEngine) -> list[Result]:
        return [
            offer(target, "o3", 900_000, seller="s3", now=10),
            target.change_offer("o2", price_micros=1_000_000, now=20),
            target.expire(60),
            bid(target, "b3", 4, None, order_type="market", now=61),
        ]

    assert follow(restored) == follow(e)


def test_restore_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="format"):
        MatchingEngine.restore({"format": 99})


def test_capacity_terms_are_checked_on_arrival() -> None:
    e = engine()
    assert offer(e, "n1", 2_000_000, notice_s=119).rejection == Reason.INVALID_NOTICE
    assert offer(e, "n2", 2_000_000, notice_s=86_401).rejection == Reason.INVALID_NOTICE
    assert offer(e, "n3", 2_000_000, notice_s=86_400).rejection is None
    too_dear = offer(e, "p1", 2_000_000, interruptible=2_000_001)
    assert too_dear.rejection == Reason.INVALID_PRICE
    assert offer(e, "p2", 2_000_000, interruptible=0).rejection == (Reason.INVALID_PRICE)
    interruptible = offer(e, "p3", 2_000_000, tier="interruptible", interruptible=1)
    assert interruptible.rejection == Reason.INVALID_PRICE
    assert interruptible.offers[-1].status == OfferStatus.REJECTED
    assert offer(e, "p4", 2_000_000, interruptible=2_000_000).rejection is None
