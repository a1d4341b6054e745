"""Capacity in the views, on memory and on PostgreSQL: an offer's two prices, its notice and
the pool the book reports; what an order keeps for its re-buy; a fill's offer and start; a
lease's interruption notice in any order; the status a listing filters by at its instant; and
the read of a lease as its unit leaves it so far."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.accounts import Role
from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.events import Payload
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseEndReason, LeaseOpened
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferAccepted, OfferStatus, Tier
from gpux_devinfra.testing.payloads import offer_status, order_placed, trade_executed
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.clock import ManualClock

from ..lease_events import (
    hourly_totals,
    lease_charged,
    lease_ended,
    lease_noticed,
    lease_opened,
)
from .conftest import Units
from .test_gateway_leases_contract import apply, in_order
from .test_gateway_repositories_contract import account, submitted

pytestmark = pytest.mark.integration


async def test_an_offer_keeps_both_prices_its_notice_and_the_pool_the_book_reports(
    units: Units, clock: ManualClock
) -> None:
    seller = await account(units, Role.SELLER)
    body = submitted(seller.id, new_id()).model_copy(
        update={
            "interruptible_price_per_gpu_hour": Decimal("0.2"),
            "interruption_notice_seconds": 600,
        }
    )
    async with units() as uow:
        made = await uow.offers.add(body, uow.now)
        await uow.commit()
    assert (made.interruptible_price_micros, made.interruption_notice_seconds) == (200_000, 600)
    assert (made.capacity_gpus, made.leased_gpus) == (None, None)  # until the book says

    reports = [
        offer_status(made.id, OfferStatus.LIVE, 4, seller_id=seller.id, capacity_gpus=4),
        offer_status(
            made.id, OfferStatus.EXHAUSTED, 0, seller_id=seller.id, capacity_gpus=4, leased_gpus=4
        ),
        offer_status(made.id, OfferStatus.ACCEPTED, 4, seller_id=seller.id),  # pricing's
        offer_status(made.id, OfferStatus.LIVE, 1, seller_id=seller.id, leased_gpus=3),
    ]
    clock.advance(timedelta(seconds=1))
    async with units() as uow:
        for change in reports:
            await uow.offers.apply_status(change, uow.now)
        await uow.commit()
    async with units() as uow:
        shown = await uow.offers.get(seller.id, made.id)
    assert shown == replace(
        made,
        status="live",
        remaining_gpus=1,
        capacity_gpus=4,
        leased_gpus=3,
        updated_at=clock.now(),
    )
    changed = body.model_copy(
        update={"interruptible_price_per_gpu_hour": None, "interruption_notice_seconds": 120}
    )
    async with units() as uow:  # a later revision: one tier again, the default notice
        await uow.offers.apply_accepted(OfferAccepted(offer=changed, revision=2), uow.now)
        await uow.commit()
    async with units() as uow:
        again = await uow.offers.get(seller.id, made.id)
    assert again is not None
    assert (again.interruptible_price_micros, again.interruption_notice_seconds) == (None, 120)


async def test_an_order_keeps_its_wallet_its_rebuy_and_whose_cap_it_shows(units: Units) -> None:
    buyer = await account(units)
    rebuying = order_placed(
        order_id=new_id(),
        buyer_id=buyer.id,
        gpus=2,
        currency=Currency.USD,
        wallet_currency=Currency.EUR,
        rebuy_on_interruption=True,
        rebuy_of="lease-1",
    )
    plain = order_placed(order_id=new_id(), buyer_id=buyer.id, price="0.5")
    async with units() as uow:
        for order in (rebuying, plain):
            await uow.orders.add(order, uow.now)
            await uow.orders.apply_cap(buyer.id, order.order_id, 610_000)
        await uow.commit()
    async with units() as uow:
        first = await uow.orders.get(buyer.id, rebuying.order_id)
        second = await uow.orders.get(buyer.id, plain.order_id)
    assert first is not None
    assert second is not None
    assert (first.wallet_currency, first.rebuy_on_interruption, first.rebuy_of) == (
        "EUR",
        True,
        "lease-1",
    )
    assert (first.max_price_micros, first.cap_from_billing) == (610_000, True)
    assert (second.wallet_currency, second.rebuy_on_interruption, second.rebuy_of) == (
        None,
        False,
        None,
    )
    assert (second.max_price_micros, second.cap_from_billing) == (500_000, False)


async def test_a_fill_keeps_its_offer_and_a_later_start(units: Units) -> None:
    buyer = await account(units)
    order = order_placed(order_id=new_id(), buyer_id=buyer.id, gpus=2, price="3")
    later = EPOCH + timedelta(minutes=2)
    trade = trade_executed(
        order_id=order.order_id,
        buyer_id=buyer.id,
        offer_id="offer-9",
        price="3",
        gpus=2,
        executed_at=EPOCH,
        starts_at=later,
    )
    async with units() as uow:
        await uow.orders.add(order, uow.now)
        await uow.orders.add_fill(trade)
        await uow.commit()
    async with units() as uow:
        (fill,) = await uow.orders.fills(buyer.id, order.order_id)
    assert (fill.offer_id, fill.starts_at, fill.executed_at) == ("offer-9", later, EPOCH)


def notice(lease: LeaseOpened, minutes: int = 2) -> LeaseInterruptionNoticed:
    noticed_at = EPOCH + timedelta(minutes=10)
    return lease_noticed(lease, noticed_at=noticed_at, notice=timedelta(minutes=minutes))


def interrupted_life(lease_id: str, buyer: str, seller: str) -> list[Payload]:
    """An interruptible lease: opened, charged, noticed (twice, differently: billing sends
    one, so whichever is read first stays), ended interrupted at its interrupt_at."""
    opened = lease_opened(buyer, seller, lease_id=lease_id, started_at=EPOCH, tier="interruptible")
    first = notice(opened)
    return [
        opened,
        lease_charged(opened, hourly_totals(EPOCH, 1)),
        first,
        notice(opened, minutes=30),
        lease_ended(
            opened,
            hourly_totals(EPOCH, 1),
            reason=LeaseEndReason.INTERRUPTED,
            ended_at=first.interrupt_at,
        ),
    ]


async def apply_any(uow: GatewayUnitOfWork, payload: Payload) -> None:
    if isinstance(payload, LeaseInterruptionNoticed):
        await uow.leases.apply_notice(payload, uow.now)
    else:
        await apply(uow, payload)


@pytest.mark.parametrize(
    "order", list(itertools.islice(itertools.permutations(range(5)), 0, 120, 17))
)
async def test_an_interruption_notice_in_any_order_gives_the_same_lease(
    units: Units, order: tuple[int, ...]
) -> None:
    lease_id, buyer, seller = new_id(), new_id(), new_id()
    events = interrupted_life(lease_id, buyer, seller)
    first = events[next(i for i in order if i in (2, 3))]  # the notice read first
    assert isinstance(first, LeaseInterruptionNoticed)
    await in_order(units, events, order, apply_any)
    async with units() as uow:
        row = await uow.leases.get(buyer, lease_id)
    assert row is not None
    assert (row.opened, row.status, row.end_reason, row.wallet_currency, row.offer_id) == (
        True,
        "ended",
        "interrupted",
        "EUR",
        first.offer_id,
    )
    assert (row.interrupt_at, row.interruption_cause, row.interruption_noticed_at) == (
        first.interrupt_at,
        "preempted",
        first.noticed_at,
    )


async def test_a_listing_filters_by_the_status_at_its_instant(units: Units) -> None:
    buyer, seller = new_id(), new_id()
    later = EPOCH + timedelta(minutes=5)
    ids = sorted(new_id() for _ in range(4))
    running, scheduled, interrupting, ended = (
        lease_opened(buyer, seller, lease_id=i, started_at=EPOCH, tier=Tier.INTERRUPTIBLE.value)
        for i in ids
    )
    scheduled = scheduled.model_copy(update={"started_at": later, "tier": "on_demand"})
    async with units() as uow:
        for lease in (running, scheduled, interrupting, ended):
            await uow.leases.apply_opened(lease, uow.now)
        await uow.leases.apply_notice(notice(interrupting), uow.now)
        await uow.leases.apply_ended(lease_ended(ended, hourly_totals(EPOCH, 1)), uow.now)
        await uow.commit()

    async def listed(status: str, at_minutes: int = 0) -> list[str]:
        async with units() as uow:
            which = LeaseFilter(buyer, status=status)
            at = EPOCH + timedelta(minutes=at_minutes)
            return [r.id for r in await uow.leases.page(which, after=None, limit=9, now=at)]

    assert await listed("running") == [running.lease_id]
    assert await listed("scheduled") == [scheduled.lease_id]
    assert await listed("interrupting") == [interrupting.lease_id]
    assert await listed("ended") == [ended.lease_id]
    assert await listed("running", at_minutes=5) == [running.lease_id, scheduled.lease_id]
    assert await listed("scheduled", at_minutes=5) == []


async def test_the_current_lease_is_what_the_unit_wrote_so_far_whoever_asks(units: Units) -> None:
    lease_id, buyer, seller = new_id(), new_id(), new_id()
    opened, _charged, first, _late, end = interrupted_life(lease_id, buyer, seller)
    assert isinstance(opened, LeaseOpened)
    async with units() as uow:
        assert await uow.leases.current(lease_id) is None
        await apply_any(uow, opened)
        await apply_any(uow, first)
        await apply_any(uow, end)
        now = await uow.leases.current(lease_id)  # before the commit, in the unit
        await apply_any(uow, lease_charged(opened, hourly_totals(EPOCH, 2)))  # after it
        await uow.commit()
    assert now is not None
    assert (now.opened, now.status, now.end_reason, now.gpus) == (True, "ended", "interrupted", 1)
    async with units() as uow:
        row = await uow.leases.get(buyer, lease_id)
    assert row is not None
    assert row.period == 2  # what was queued after the read was written at the commit
