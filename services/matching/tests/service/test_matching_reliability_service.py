"""Sellers' reliability on the book: the feed keeps per seller the counts that counted most,
partitions log the rates as a command of their own, and an order with a minimum waits until
the partition has the rates that were current at start, then fills only from qualifying
sellers."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts
from gpux_contracts.topics import MARKET_TRADES, ORDERS_BOOK, PRICING_OFFERS
from gpux_matching.domain import AddOffer, PlaceOrder, SetFx, SetSellerReliability
from gpux_matching.service import OFFER_HANDLERS, ORDER_HANDLERS
from gpux_matching.service.orders import place_command
from gpux_matching.service.partition import NotYetError
from gpux_matching.service.partitions import Partitions
from gpux_matching.service.reliability import ReliabilityFeed

from .matching_desk import NOW, Desk

pytestmark = pytest.mark.unit


def counts(ready: int, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


def changed(seller: ReliabilityCounts, seller_id: str = "seller-1") -> ReliabilityChanged:
    return ReliabilityChanged(
        seller_id=seller_id,
        offer_id="f1",
        offer=seller,
        seller=seller,
        lease_id="l1",
        as_of=NOW,
    )


def sellers_traded(desk: Desk) -> list[tuple[str, int]]:
    return [(t.seller_id, t.gpus) for t in desk.published(MARKET_TRADES)]


def six_partitions(desk: Desk) -> Partitions:
    """Partitions over the desk's store, the reliability topic found empty at start."""
    held = Partitions(desk.store, desk.clock, snapshot_every=100, partitions=6)
    held.reliability.set_ends({})
    return held


async def holding_partition_0(desk: Desk, read_first: ReliabilityChanged) -> Partitions:
    """``six_partitions`` that read ``read_first`` from the feed, then were given partition 0."""
    held = six_partitions(desk)
    held.reliability.apply(read_first, 0, 0)
    await held.assign({0})
    return held


# The feed -----------------------------------------------------------------------------------


def test_the_feed_waits_for_every_partition_that_had_records_at_start() -> None:
    feed = ReliabilityFeed()
    feed.set_ends({0: 1, 1: 0, 2: 2})
    assert not feed.apply(changed(counts(9, 1)), 0, 0)  # partition 2 is not read yet
    assert not feed.apply(None, 2, 0)
    assert feed.apply(changed(counts(3, 1), "seller-2"), 2, 1)  # caught up: now it counts
    assert feed.rates() == {"seller-1": 9_000, "seller-2": 7_500}


def test_an_empty_or_missing_topic_is_caught_up_at_once() -> None:
    feed = ReliabilityFeed()
    assert not feed.caught_up  # nothing known of the topic yet
    feed.set_ends({})
    assert feed.caught_up


def test_the_counts_that_counted_most_win_and_an_older_record_never_steps_back() -> None:
    feed = ReliabilityFeed()
    feed.set_ends({0: 0, 1: 0})
    assert feed.apply(changed(counts(9, 1)), 0, 0)
    assert not feed.apply(changed(counts(1)), 1, 0)  # fewer counted: from before, ignored
    assert feed.rates() == {"seller-1": 9_000}
    assert feed.counts("seller-1") == counts(9, 1)
    assert not feed.apply(changed(counts(9, 0, 1)), 1, 1)  # as many, the same rate: no change
    assert feed.counts("seller-1") == counts(9, 0, 1)  # an equal total replaces (the rule)
    assert feed.apply(changed(counts(9, 2)), 0, 1)
    assert feed.rates() == {"seller-1": 8_181}  # 9 / 11, rounded down


def test_a_seller_with_nothing_counted_has_no_rate() -> None:
    feed = ReliabilityFeed()
    feed.set_ends({})
    assert not feed.apply(changed(counts(0)), 0, 0)
    assert feed.rates() == {}


# Orders with a minimum on a partition -------------------------------------------------------


def test_a_placed_orders_minimum_reaches_the_command_in_basis_points() -> None:
    order = Desk.order(2, "0.50", min_reliability=Decimal("0.9525"))
    assert place_command(order, 1).min_reliability_bp == 9_525
    assert place_command(Desk.order(2, "0.50"), 1).min_reliability_bp is None


async def test_an_order_with_a_minimum_waits_for_the_rates_then_takes_only_qualifying_sellers(
    desk: Desk,
) -> None:
    shaky = desk.offer("0.30", 2, seller_id="shaky")
    solid = desk.offer("0.35", 2, seller_id="solid")
    await desk.offers(desk.accepted(shaky), desk.accepted(solid))
    picky = desk.order(3, "0.50", min_reliability=Decimal("0.9"))
    with pytest.raises(NotYetError):
        await desk.orders(desk.funded(picky))
    assert desk.published(MARKET_TRADES) == []

    await desk.partition.set_reliability({"shaky": 8_999, "solid": 9_000})
    await desk.partition.set_reliability({"shaky": 8_999, "solid": 9_000})  # nothing new
    outcome = await desk.orders(desk.funded(picky))

    assert outcome.applied == 1
    assert sellers_traded(desk) == [("solid", 2)]
    logged = desk.logged()
    assert [type(c) for c in logged] == [AddOffer, AddOffer, SetSellerReliability, PlaceOrder]
    assert isinstance(logged[-1], PlaceOrder)
    assert logged[-1].min_reliability_bp == 9_000
    # A partition rebuilt from the log holds the same rates and the same book.
    again = desk.new_partition()
    await again.recover()
    assert again.engine.snapshot() == desk.partition.engine.snapshot()
    assert again.engine.reliability == {"shaky": 8_999, "solid": 9_000}


async def test_orders_without_a_minimum_never_wait_for_the_rates(desk: Desk) -> None:
    await desk.offers(desk.accepted(desk.offer("0.30", 2, seller_id="nobody")))
    outcome = await desk.orders(desk.funded(desk.order(1, "0.50")))
    assert outcome.applied == 1
    assert sellers_traded(desk) == [("nobody", 1)]


async def test_a_seller_rising_to_a_resting_minimum_fills_it_in_a_logged_command(
    desk: Desk,
) -> None:
    await desk.partition.set_reliability({"seller-1": 5_000})
    await desk.offers(desk.accepted(desk.offer("0.30", 2)))
    picky = desk.order(2, "0.50", min_reliability=Decimal("0.8"))
    await desk.orders(desk.funded(picky))
    assert sellers_traded(desk) == []
    await desk.partition.set_reliability({"seller-1": 8_000})
    assert sellers_traded(desk) == [("seller-1", 2)]
    assert isinstance(desk.logged()[-1], SetSellerReliability)
    # The trade is the book's own: caused by the logged command.
    trade = next(m for m in desk.uow.published if m.topic is MARKET_TRADES)
    assert str(trade.envelope.causation_id).startswith("matching-command-")


async def test_after_a_rebuild_what_could_fill_a_resting_minimum_waits_for_the_rates(
    desk: Desk,
) -> None:
    await desk.partition.set_reliability({"seller-1": 9_500})
    await desk.orders(desk.funded(desk.order(2, "0.50", min_reliability=Decimal("0.9"))))
    restarted = desk.new_partition()
    await restarted.recover()
    assert not restarted.reliability_current
    offer = desk.accepted(desk.offer("0.30", 2))
    with pytest.raises(NotYetError):  # it would meet the order with a minimum
        await restarted.consume(PRICING_OFFERS, [offer], OFFER_HANDLERS)
    await restarted.set_rates({"USD": Decimal("920000")})  # an FX move would too: not yet
    assert not any(isinstance(c, SetFx) for c in desk.logged())

    await restarted.set_reliability({"seller-1": 9_000})
    outcome = await restarted.consume(PRICING_OFFERS, [offer], OFFER_HANDLERS)
    assert outcome.applied == 1
    assert sellers_traded(desk) == [("seller-1", 2)]


# Every partition held -----------------------------------------------------------------------


async def test_partitions_log_new_rates_in_each_partition_they_hold_once_woken(
    desk: Desk,
) -> None:
    held = six_partitions(desk)
    await held.assign({0, 3})
    assert all(held.partition(n).reliability_current for n in (0, 3))

    waiting = asyncio.create_task(held.next_reliability())
    for n, ready in enumerate((3, 4, 5)):  # three records, then one wake-up
        if held.reliability.apply(changed(counts(ready, 1)), 0, n):
            held.reliability_arrived()
    await asyncio.wait_for(waiting, timeout=5)

    for number in (0, 3):
        assert held.partition(number).engine.reliability == {"seller-1": 8_333}
    logged = [
        (p, kind) for _, p, kind, _ in desk.uow.state.commands if kind == "set_seller_reliability"
    ]
    assert logged == [(0, "set_seller_reliability"), (3, "set_seller_reliability")]


async def test_a_partition_rebuilt_since_gets_the_rates_before_its_next_batch(
    desk: Desk,
) -> None:
    held = await holding_partition_0(desk, changed(counts(9, 1)))
    part = held.partition(0)
    await part.recover()  # as at an assignment
    assert not part.reliability_current
    picky = desk.funded(desk.order(1, "0.50", min_reliability=Decimal("0.9")))
    outcome = await held.consume(0, ORDERS_BOOK, [picky], ORDER_HANDLERS)
    assert outcome.applied == 1
    assert part.reliability_current


async def test_a_partition_fenced_by_another_instance_waits_then_gets_the_rates(
    desk: Desk,
) -> None:
    held = await holding_partition_0(desk, changed(counts(9, 1)))
    part = held.partition(0)
    elsewhere = desk.new_partition()  # another instance logs to partition 0 meanwhile
    await elsewhere.recover()
    await elsewhere.set_reliability({"seller-2": 5_000})
    picky = desk.funded(desk.order(1, "0.50", min_reliability=Decimal("0.9")))

    with pytest.raises(NotYetError):  # fenced, rebuilt from the other's log: not current
        await held.consume(0, ORDERS_BOOK, [picky], ORDER_HANDLERS)
    assert not part.reliability_current
    outcome = await held.consume(0, ORDERS_BOOK, [picky], ORDER_HANDLERS)  # delivered again
    assert outcome.applied == 1
    assert part.reliability_current


async def test_a_record_that_fails_alone_is_set_aside_while_a_bid_with_a_minimum_rests(
    desk: Desk,
) -> None:
    """A unit that rolls back rebuilds the engine from this instance's own log, which holds
    the rates it logged: the rebuilt partition stays current, so the batch's halves go on
    (they do not wait for rates, which only the next delivery would bring) and the record
    that fails alone is set aside on the first delivery."""
    await desk.partition.set_reliability({"seller-1": 9_500})
    picky = desk.order(2, "0.50", min_reliability=Decimal("0.9"))
    await desk.orders(desk.funded(picky))
    good = desk.accepted(desk.offer("0.30", 2))
    bad = desk.accepted(desk.offer("0.1234567", 2))  # more than 6 decimals: its handler fails

    outcome = await desk.offers(good, bad)

    assert (outcome.applied, outcome.set_aside) == (1, 1)
    assert desk.partition.reliability_current
    assert sellers_traded(desk) == [("seller-1", 2)]  # the good offer met the picky bid
    assert [type(c) for c in desk.logged()] == [SetSellerReliability, PlaceOrder, AddOffer]


# Totals across owners -----------------------------------------------------------------------


def test_the_feed_gives_each_rate_with_its_total_and_a_grown_total_is_news() -> None:
    feed = ReliabilityFeed()
    feed.set_ends({})
    assert feed.apply(changed(counts(10)), 0, 0)
    assert feed.apply(changed(counts(20)), 0, 1)  # the same rate, counted over more
    assert (feed.rates(), feed.totals()) == ({"seller-1": 10_000}, {"seller-1": 20})
    assert not feed.apply(changed(counts(0, 0)), 0, 2)  # nothing counted: no rate, no total
    assert feed.totals() == {"seller-1": 20}


async def test_a_partition_logs_no_rate_counted_over_fewer_leases_than_it_holds(
    desk: Desk,
) -> None:
    await desk.partition.set_reliability({"seller-1": 8_000}, {"seller-1": 25})
    await desk.partition.set_reliability({"seller-1": 9_500}, {"seller-1": 20})  # older
    await desk.partition.set_reliability({"seller-1": 8_000}, {"seller-1": 25})  # nothing new
    assert desk.partition.engine.reliability == {"seller-1": 8_000}
    await desk.partition.set_reliability({"seller-1": 8_000}, {"seller-1": 30})  # a total grew
    assert desk.partition.engine.reliability_totals == {"seller-1": 30}
    assert desk.logged() == [
        SetSellerReliability(desk.logged()[0].now, {"seller-1": 8_000}, {"seller-1": 25}),
        SetSellerReliability(desk.logged()[1].now, {"seller-1": 8_000}, {"seller-1": 30}),
    ]


async def test_a_new_owner_whose_feed_lags_never_steps_a_seller_back(desk: Desk) -> None:
    """Instance A counted S's failures (20 ready, 5 failed: 8,000) and logged them; instance B,
    whose feed still holds S at 19 ready, 1 failed (9,500), takes the partition over. B's
    engine keeps A's rate, so an order with a minimum of 0.9 does not fill from S."""
    a = await holding_partition_0(desk, changed(counts(20, 5), "S"))
    offer = desk.accepted(desk.offer("0.30", 2, seller_id="S"))
    await a.consume(0, PRICING_OFFERS, [offer], OFFER_HANDLERS)
    await a.revoke({0})

    b = await holding_partition_0(desk, changed(counts(19, 1), "S"))
    assert b.partition(0).engine.reliability == {"S": 8_000}
    picky = desk.funded(desk.order(2, "0.50", min_reliability=Decimal("0.9")))
    outcome = await b.consume(0, ORDERS_BOOK, [picky], ORDER_HANDLERS)

    assert outcome.applied == 1
    assert sellers_traded(desk) == []
    assert [type(c) for c in desk.logged()] == [SetSellerReliability, AddOffer, PlaceOrder]
