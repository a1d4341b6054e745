"""Capacity through the memory unit of work: leases that end give their GPUs back, sellers
reclaim interruptible leases, on-demand orders preempt them (``docs/CAPACITY.md``).

Leases are named by their trades' ids (billing's lease id is the trade id); every lease's
end comes as billing sends it, on ``capacity.commands``.
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.book import BookLevelsChanged
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatusChanged, OfferSubmitted
from gpux_contracts.orders import OrderStatusChanged, OrderTier, TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    MARKET_BOOK,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_STATUS,
)
from gpux_matching.domain import ReclaimLease, ReleaseLease, epoch_micros

from ..legacy_book import format_1_offer, format_1_snapshot
from .matching_desk import Desk

pytestmark = pytest.mark.unit

Pool = tuple[str, str, int, int, int | None]
"""(offer id, status, capacity, leased, free) as an ``offer.status_changed`` reports it."""


def pools(desk: Desk) -> list[Pool]:
    seen: list[OfferStatusChanged] = desk.published(OFFERS_STATUS)
    return [
        (s.offer_id, s.status.value, s.capacity_gpus or 0, s.leased_gpus or 0, s.remaining_gpus)
        for s in seen
    ]


def trades(desk: Desk) -> list[TradeExecuted]:
    found: list[TradeExecuted] = desk.published(MARKET_TRADES)
    return found


def interruptions(desk: Desk) -> list[LeaseInterruptionRequested]:
    found: list[LeaseInterruptionRequested] = desk.published(BILLING_COMMANDS)
    return found


def two_tier(desk: Desk, gpus: int = 4, notice_s: int = 300) -> OfferSubmitted:
    """An offer sold on demand at 0.50 and as interruptible leases at 0.20."""
    return desk.offer(
        "0.50",
        gpus,
        interruptible_price_per_gpu_hour=Decimal("0.20"),
        interruption_notice_seconds=notice_s,
    )


async def leased(desk: Desk, offer: OfferSubmitted, gpus: int, **order: Any) -> TradeExecuted:
    """The offer on the book and a market order that leases ``gpus`` of it: its one trade."""
    if desk.partition.engine.offer(offer.offer_id) is None:
        await desk.offers(desk.accepted(offer))
    placed = desk.order(gpus, **order)
    await desk.orders(desk.funded(placed))
    (fill,) = [t for t in trades(desk) if t.order_id == placed.order_id]
    assert fill.offer_id == offer.offer_id
    return fill


# Release ----------------------------------------------------------------------------------------


async def test_an_exhausted_offer_stays_and_is_live_again_when_its_lease_is_released(
    desk: Desk,
) -> None:
    offer = desk.offer("0.40", 4)
    lease = await leased(desk, offer, 4)
    assert lease.starts_at is None  # an ordinary trade starts when it is made
    assert pools(desk)[-1] == (offer.offer_id, "exhausted", 4, 4, 0)
    assert desk.partition.engine.offer(offer.offer_id) is not None  # kept, with no free GPU

    desk.later(60)
    released = desk.released(lease)
    outcome = await desk.capacity(released)
    assert outcome.applied == 1
    now = epoch_micros(desk.clock.now())
    assert desk.logged()[-1] == ReleaseLease(
        now=now, lease_id=lease.trade_id, offer_id=offer.offer_id, gpus=4
    )
    assert pools(desk)[-1] == (offer.offer_id, "live", 4, 0, 4)
    status = desk.uow.published[-2]
    assert status.topic is OFFERS_STATUS
    assert status.envelope.causation_id == released.event_id
    book: BookLevelsChanged = desk.published(MARKET_BOOK)[-1]
    assert [(str(lv.price), lv.gpus) for lv in book.asks] == [("0.40", 4)]
    pool = desk.partition.engine.pool(offer.offer_id)
    assert pool is not None
    assert (pool.capacity, pool.leased, pool.free, dict(pool.leases)) == (4, 0, 4, {})

    # Redelivered, the release is recognised and changes nothing.
    before = list(desk.uow.published)
    again = await desk.capacity(released)
    assert (again.applied, again.duplicate) == (0, 1)
    assert desk.uow.published == before


async def test_gpus_that_come_back_go_to_a_resting_bid_at_once(desk: Desk) -> None:
    offer = desk.offer("0.40", 2)
    first = await leased(desk, offer, 2)
    waiting = desk.order(2, "0.45")
    await desk.orders(desk.funded(waiting))
    seen: list[OrderStatusChanged] = desk.published(ORDERS_STATUS)
    assert (seen[-1].order_id, seen[-1].status.value) == (waiting.order_id, "open")

    await desk.capacity(desk.released(first))
    (taken,) = [t for t in trades(desk) if t.order_id == waiting.order_id]
    assert (taken.offer_id, taken.gpus, taken.price_per_gpu_hour) == (
        offer.offer_id,
        2,
        Decimal("0.45"),  # the bid rested: the trade is at its price
    )
    assert taken.starts_at is None
    seen = desk.published(ORDERS_STATUS)
    assert (seen[-1].order_id, seen[-1].status.value, seen[-1].filled_gpus) == (
        waiting.order_id,
        "filled",
        2,
    )
    # One status for the offer in the command that gave the GPUs back and sold them again.
    assert pools(desk)[-1] == (offer.offer_id, "exhausted", 2, 2, 0)


async def test_a_lease_of_part_of_an_offer_returns_its_gpus_to_the_rest(desk: Desk) -> None:
    offer = desk.offer("0.40", 4)
    lease = await leased(desk, offer, 3)
    assert pools(desk)[-1] == (offer.offer_id, "live", 4, 3, 1)
    await desk.capacity(desk.released(lease))
    assert pools(desk)[-1] == (offer.offer_id, "live", 4, 0, 4)


async def test_a_release_the_book_does_not_know_publishes_nothing_and_fails_nothing(
    desk: Desk,
) -> None:
    offer, gone = desk.offer("0.40", 4), desk.offer("0.39", 2)
    old = await leased(desk, gone, 2)
    lease = await leased(desk, offer, 2)
    await desk.offers(desk.withdrawn(gone))
    logged = len(desk.logged())
    before = list(desk.uow.published)
    stranger = lease.model_copy(update={"trade_id": "never-sold"})
    outcome = await desk.capacity(desk.released(old), desk.released(stranger))
    assert (outcome.applied, outcome.set_aside) == (2, 0)
    assert desk.uow.published == before
    # The withdrawn offer's lease ran on and its end changes nothing: not even logged. The
    # stranger, on an offer the book holds, is the engine's to judge: logged, it changes
    # nothing when replayed either.
    assert desk.logged()[logged:] == [
        ReleaseLease(
            now=epoch_micros(desk.clock.now()),
            lease_id="never-sold",
            offer_id=offer.offer_id,
            gpus=2,
        )
    ]
    pool = desk.partition.engine.pool(offer.offer_id)
    assert pool is not None
    assert (pool.capacity, pool.leased, pool.free) == (4, 2, 2)


# Reclaim ----------------------------------------------------------------------------------------


async def test_a_reclaim_interrupts_the_lease_with_the_offers_notice_and_shrinks_the_offer(
    desk: Desk,
) -> None:
    offer = two_tier(desk, 4, notice_s=600)
    lease = await leased(desk, offer, 3, tier=OrderTier.INTERRUPTIBLE)
    assert (lease.tier, lease.billing, lease.price_per_gpu_hour) == (
        "interruptible",
        "second",  # an interruptible lease can stop at any second
        Decimal("0.20"),
    )
    desk.later(30)
    reclaim = desk.reclaim(lease)
    await desk.capacity(reclaim)
    now = desk.clock.now()
    assert desk.logged()[-1] == ReclaimLease(
        now=epoch_micros(now), offer_id=offer.offer_id, lease_id=lease.trade_id
    )
    (message,) = [m for m in desk.uow.published if m.topic is BILLING_COMMANDS]
    assert message.key == lease.buyer_id
    assert message.envelope.event_id == stable_id(reclaim.event_id, "interruption", lease.trade_id)
    assert message.envelope.causation_id == reclaim.event_id
    assert message.envelope.payload == LeaseInterruptionRequested(
        lease_id=lease.trade_id,
        buyer_id=lease.buyer_id,
        offer_id=offer.offer_id,
        seller_id=offer.seller_id,
        gpu=offer.gpu,
        gpus=3,
        cause=InterruptionCause.RECLAIMED,
        noticed_at=now,
        interrupt_at=now + timedelta(seconds=600),
        taken_by=[],
    )
    # Asked again: the lease is already being interrupted; nothing more is sent.
    await desk.capacity(desk.reclaim(lease))
    assert len(interruptions(desk)) == 1

    # When the lease ends, its GPUs leave the offer.
    desk.later(600)
    await desk.capacity(desk.released(lease, reason=LeaseEndReason.INTERRUPTED))
    assert pools(desk)[-1] == (offer.offer_id, "live", 1, 0, 1)

    # A later re-price (pricing's offer still says 4 GPUs) does not give them back; a change
    # of the GPU count does.
    repriced = offer.model_copy(update={"price_per_gpu_hour": Decimal("0.45")})
    await desk.offers(desk.accepted(repriced, 2, changed=["price_per_gpu_hour"]))
    assert pools(desk)[-1] == (offer.offer_id, "live", 1, 0, 1)
    await desk.offers(desk.accepted(repriced, 3, changed=["gpus"]))
    assert pools(desk)[-1] == (offer.offer_id, "live", 4, 0, 4)


async def test_a_reclaim_of_an_on_demand_lease_or_of_no_lease_is_dropped_quietly(
    desk: Desk,
) -> None:
    offer = desk.offer("0.40", 4)
    lease = await leased(desk, offer, 2, tier=OrderTier.ON_DEMAND)
    before = list(desk.uow.published)
    unknown = lease.model_copy(update={"trade_id": "never-sold"})
    outcome = await desk.capacity(desk.reclaim(lease), desk.reclaim(unknown))
    assert (outcome.applied, outcome.set_aside) == (2, 0)
    assert desk.uow.published == before
    pool = desk.partition.engine.pool(offer.offer_id)
    assert pool is not None
    assert pool.leases[lease.trade_id].interrupt_at_micros is None


# Preemption -------------------------------------------------------------------------------------


async def test_an_on_demand_order_preempts_an_interruptible_lease_and_starts_at_its_end(
    desk: Desk,
) -> None:
    offer = two_tier(desk, 4, notice_s=300)
    spot = await leased(desk, offer, 4, tier=OrderTier.INTERRUPTIBLE)
    assert pools(desk)[-1] == (offer.offer_id, "exhausted", 4, 4, 0)

    desk.later(10)
    urgent = desk.order(2, "0.60", tier=OrderTier.ON_DEMAND)
    funded = desk.funded(urgent)
    await desk.orders(funded)
    now = desk.clock.now()
    interrupt_at = now + timedelta(seconds=300)
    (taking,) = [t for t in trades(desk) if t.order_id == urgent.order_id]
    assert (taking.tier, taking.gpus, taking.price_per_gpu_hour, taking.billing) == (
        "on_demand",
        2,
        Decimal("0.50"),  # the offer's on-demand price
        "hour",
    )
    assert (taking.executed_at, taking.starts_at) == (now, interrupt_at)
    seen: list[OrderStatusChanged] = desk.published(ORDERS_STATUS)
    assert (seen[-1].order_id, seen[-1].status.value) == (urgent.order_id, "filled")
    (message,) = [m for m in desk.uow.published if m.topic is BILLING_COMMANDS]
    assert message.key == spot.buyer_id
    assert message.envelope.event_id == stable_id(funded.event_id, "interruption", spot.trade_id)
    interruption = message.envelope.payload
    assert isinstance(interruption, LeaseInterruptionRequested)
    assert (interruption.lease_id, interruption.gpus, interruption.cause) == (
        spot.trade_id,
        4,  # interrupted whole
        InterruptionCause.PREEMPTED,
    )
    assert (interruption.noticed_at, interruption.interrupt_at) == (now, interrupt_at)
    assert interruption.taken_by == [taking.trade_id]

    # The interrupted lease ends: two GPUs go to the order that took them, two are free.
    desk.later(300)
    await desk.capacity(desk.released(spot, reason=LeaseEndReason.INTERRUPTED))
    assert pools(desk)[-1] == (offer.offer_id, "live", 4, 2, 2)
    pool = desk.partition.engine.pool(offer.offer_id)
    assert pool is not None
    assert set(pool.leases) == {taking.trade_id}


async def test_a_replayed_partition_interrupts_and_releases_exactly_as_the_first(
    desk: Desk,
) -> None:
    offer = two_tier(desk, 4)
    spot = await leased(desk, offer, 3, tier=OrderTier.INTERRUPTIBLE)
    await desk.orders(desk.funded(desk.order(2, "0.55", tier=OrderTier.ON_DEMAND)))
    desk.later(120)
    await desk.capacity(desk.released(spot, reason=LeaseEndReason.INTERRUPTED))
    rebuilt = desk.new_partition()
    await rebuilt.recover()
    assert rebuilt.engine.snapshot() == desk.partition.engine.snapshot()
    assert rebuilt.engine.pool(offer.offer_id) == desk.partition.engine.pool(offer.offer_id)


# Migration --------------------------------------------------------------------------------------


def legacy_snapshot(seq: int) -> str:
    """What the book stored before capacity: an offer of 4 GPUs with 3 sold (to leases it
    knew no id of) and a bid resting below it."""
    offer = format_1_offer("offer-legacy", "seller-1", "h100", "on_demand", 400_000)
    bid = {
        "order_id": "bid-legacy",
        "buyer_id": "buyer-2",
        "gpu": "h100",
        "tier": "on_demand",
        "price_micros": 300_000,
        "currency": "EUR",
        "gpus": 2,
        "filled": 0,
        "remaining": 2,
        "region": None,
        "hours": 2,
        "expires_at": None,
        "seq": 3,
        "taken": 0,
    }
    return json.dumps(format_1_snapshot(3, [offer], [bid]))


async def test_a_partition_stored_before_capacity_migrates_and_its_old_leases_give_gpus_back() -> (
    None
):
    desk = Desk(snapshot_every=1)
    state = desk.uow.state
    state.last_seq = state.heads[0] = 41
    state.snapshots[0] = {41: legacy_snapshot(41)}
    state.offers["offer-legacy"] = ("seller-1", "h100", 1)
    state.orders["bid-legacy"] = ("buyer-2", "h100")
    await desk.partition.recover()
    pool = desk.partition.engine.pool("offer-legacy")
    assert pool is not None
    assert (pool.capacity, pool.leased, pool.free, dict(pool.leases)) == (4, 3, 1, {})
    assert desk.partition.engine.order("bid-legacy") is not None

    # A lease sold before the upgrade ends: the book does not know its id, but gives its GPUs
    # back from what the offer had sold.
    legacy = TradeExecuted(
        trade_id="lease-from-before",
        order_id="order-legacy",
        offer_id="offer-legacy",
        buyer_id="buyer-1",
        seller_id="seller-1",
        gpu="h100",
        tier="on_demand",
        gpus=2,
        price_per_gpu_hour=Decimal("0.40"),
        currency=Currency.EUR,
        billing="hour",
        hours=2,
        executed_at=desk.clock.now() - timedelta(hours=1),
    )
    await desk.capacity(desk.released(legacy))
    assert pools(desk) == [("offer-legacy", "live", 4, 1, 3)]
    # The next snapshot is of the new format, and the partition rebuilt from it is the same.
    (stored,) = [json.loads(body) for seq, body in state.snapshots[0].items() if seq > 41]
    assert stored["format"] == 2
    again = desk.new_partition()
    await again.recover()
    assert again.engine.snapshot() == desk.partition.engine.snapshot()
    assert again.engine.pool("offer-legacy") == desk.partition.engine.pool("offer-legacy")
