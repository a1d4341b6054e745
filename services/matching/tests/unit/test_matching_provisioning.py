"""An offer's provisioning timeout in the engine (docs/DELIVERY.md): kept per pool, copied
onto every trade of the offer whichever way it fills (taker bid, FOK plan, taker offer, a
merge of two bid sides, a preemption), validated on arrival, logged with the command and
kept by the snapshot (a snapshot or a command from before it reads as 0)."""

from __future__ import annotations

import json

import pytest

from gpux_matching.domain import MatchingEngine, OfferStatus, Reason
from gpux_matching.domain.commands import AddOffer, decode_command, encode_command

from .engine_calls import ANY, EUR, INT, OD, S
from .engine_calls import bid as order
from .engine_calls import offer as pool

pytestmark = pytest.mark.unit

PRICE = 3_000_000


def engine() -> MatchingEngine:
    return MatchingEngine({EUR: 1_000_000})


def test_a_taker_bid_gets_each_offers_own_timeout() -> None:
    e = engine()
    pool(e, "slow", PRICE, 2, provisioning_s=600)
    pool(e, "ready", PRICE, 2)
    taken = order(e, "b1", 4, PRICE, tier=OD)
    assert [(f.offer_id, f.provisioning_s) for f in taken.fills] == [("slow", 600), ("ready", 0)]


def test_a_fok_bid_planned_over_offers_gets_each_offers_own_timeout() -> None:
    e = engine()
    pool(e, "ready", PRICE, 2)
    pool(e, "slow", PRICE, 2, provisioning_s=900)
    taken = order(e, "b1", 4, PRICE, tier=OD, time_in_force="fok")
    assert [(f.offer_id, f.provisioning_s) for f in taken.fills] == [("ready", 0), ("slow", 900)]


def test_an_arriving_offer_gives_its_timeout_to_the_bids_it_fills() -> None:
    e = engine()
    order(e, "b1", 1, PRICE, tier=OD, buyer="u1")
    one_side = pool(e, "slow", PRICE, 1, provisioning_s=120, now=3)
    order(e, "b2", 1, PRICE, tier=OD, buyer="u2", now=4)
    order(e, "b3", 1, PRICE, tier=ANY, buyer="u3", now=5)
    two_sides = pool(e, "slower", PRICE, 2, provisioning_s=3600, now=6)  # a merge of sides
    assert [(f.trade_id, f.provisioning_s) for f in one_side.fills] == [("slow:a1", 120)]
    assert sorted((f.order_id, f.provisioning_s) for f in two_sides.fills) == [
        ("b2", 3600),
        ("b3", 3600),
    ]


def test_both_legs_and_a_preempting_trade_carry_the_pools_timeout() -> None:
    e = engine()
    pool(e, "p", PRICE, 2, interruptible=1_000_000, notice_s=300, provisioning_s=60)
    spot = order(e, "spot", 2, 1_000_000, tier=INT, buyer="u1")
    preempting = order(e, "od", 2, PRICE, tier=OD, buyer="u2", now=10 * S)
    assert [(f.tier, f.provisioning_s) for f in spot.fills] == [(INT, 60)]
    (fill,) = preempting.fills
    assert (fill.starts_at_micros, fill.provisioning_s) == (310 * S, 60)


@pytest.mark.parametrize("seconds", [1, 59, 86_401, -1])
def test_a_timeout_other_than_0_outside_the_bounds_is_rejected(seconds: int) -> None:
    e = engine()
    result = pool(e, "p", PRICE, provisioning_s=seconds)
    (update,) = result.offers
    assert (update.status, update.reason) == (
        OfferStatus.REJECTED,
        Reason.INVALID_PROVISIONING_TIMEOUT,
    )
    assert e.offer("p") is None


@pytest.mark.parametrize("seconds", [0, 60, 86_400])
def test_0_and_timeouts_within_the_bounds_rest(seconds: int) -> None:
    e = engine()
    (update,) = pool(e, "p", PRICE, provisioning_s=seconds).offers
    assert update.status == OfferStatus.LIVE


def test_a_snapshot_keeps_the_timeout_and_one_without_it_reads_as_0() -> None:
    e = engine()
    pool(e, "slow", PRICE, 2, provisioning_s=600)
    pool(e, "ready", 4_000_000, 2, seller="s2")
    snapshot = json.loads(json.dumps(e.snapshot()))
    assert [o["provisioning_s"] for o in snapshot["offers"]] == [600, 0]
    restored = MatchingEngine.restore(snapshot)
    assert restored.snapshot() == snapshot
    taken = order(restored, "b1", 3, 4_000_000, tier=OD)
    assert [(f.offer_id, f.provisioning_s) for f in taken.fills] == [("slow", 600), ("ready", 0)]

    for offer in snapshot["offers"]:  # as taken before the delivery issue
        del offer["provisioning_s"]
    older = MatchingEngine.restore(snapshot)
    taken = order(older, "b1", 3, 4_000_000, tier=OD)
    assert [(f.offer_id, f.provisioning_s) for f in taken.fills] == [("slow", 0), ("ready", 0)]


def test_the_timeout_is_logged_with_the_command_and_an_older_command_means_0() -> None:
    command = AddOffer(1, "f1", "s1", "h100", OD, PRICE, EUR, 4, provisioning_s=600)
    kind, body = encode_command(command)
    assert json.loads(body)["provisioning_s"] == 600
    assert decode_command(kind, body) == command
    older = {k: v for k, v in json.loads(body).items() if k != "provisioning_s"}
    decoded = decode_command(kind, older)
    assert isinstance(decoded, AddOffer)
    assert decoded.provisioning_s == 0
