"""Capacity through the resources' services, on the memory unit of work: offers with two
prices and a notice, orders that ask to be bought again, a lease's interruption as its machine
polls for it, and the seller's reclaim."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from fastapi.exceptions import RequestValidationError

from gpux_contracts.accounts import Role
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionNoticed
from gpux_contracts.leases import LeaseOpened, LeaseStatus
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, Tier
from gpux_devinfra.testing.payloads import offer_status
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.leases import service as leases
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.offers import service as offers
from gpux_gateway.offers.schemas import OfferBatchIn, OfferChange
from gpux_gateway.orders import service as orders
from gpux_gateway.orders.schemas import OrderIn
from gpux_platform.clock import ManualClock
from gpux_platform.problems import ProblemError

from ..lease_events import hourly_totals, lease_ended, lease_noticed, lease_opened
from .test_gateway_trading_services import located, offer, offered, once
from .units import with_accounts

pytestmark = pytest.mark.unit

SELLER, BUYER, BOTH, OTHER = "seller-1", "buyer-1", "both-1", "other-1"
GPU = "rtx-4090"


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts(
        {
            SELLER: Role.SELLER,
            BUYER: Role.BUYER,
            BOTH: (Role.BUYER, Role.SELLER),
            OTHER: Role.SELLER,
        }
    )


async def test_an_offer_sells_its_pool_twice_with_a_notice_and_shows_it(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    body = offer(interruptible_price_per_gpu_hour="0.2", interruption_notice_seconds=600)
    plain = offer()
    async with uow:
        made = await offers.submit(uow, seller_id=SELLER, offer=body, once=once(SELLER))
        default = await offers.submit(uow, seller_id=SELLER, offer=plain, once=once(SELLER))
        await uow.commit()
    sent = [m.envelope.payload for m in uow.published]
    assert [(s.interruptible_price_per_gpu_hour, s.interruption_notice_seconds) for s in sent] == [
        (Decimal("0.2"), 600),
        (None, 120),
    ]
    shown = {k: made.body[k] for k in POOL_FIELDS}
    assert shown == {
        "price_per_gpu_hour": "0.33",
        "interruptible_price_per_gpu_hour": "0.20",
        "interruption_notice_seconds": 600,
        "gpus": 4,
        "capacity_gpus": 4,  # the book has not reported yet: its gpus, nothing leased
        "leased_gpus": 0,
        "remaining_gpus": 4,
    }
    assert default.body["interruptible_price_per_gpu_hour"] is None
    assert default.body["interruption_notice_seconds"] == 120


POOL_FIELDS = (
    "price_per_gpu_hour",
    "interruptible_price_per_gpu_hour",
    "interruption_notice_seconds",
    "gpus",
    "capacity_gpus",
    "leased_gpus",
    "remaining_gpus",
)


async def test_an_interruptible_price_is_for_on_demand_offers_and_never_dearer(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    single = offer(tier=Tier.INTERRUPTIBLE, interruptible_price_per_gpu_hour="0.2")
    dearer = offer(interruptible_price_per_gpu_hour="0.34")
    async with uow:
        with pytest.raises(RequestValidationError) as tier:
            await offers.submit(uow, seller_id=SELLER, offer=single, once=once(SELLER))
        with pytest.raises(RequestValidationError) as price:
            await offers.submit(uow, seller_id=SELLER, offer=dearer, once=once(SELLER))
        batch = OfferBatchIn(offers=[offer(), dearer])
        with pytest.raises(RequestValidationError) as bulk:
            await offers.submit_many(uow, seller_id=SELLER, batch=batch, once=once(SELLER))
    field = "interruptible_price_per_gpu_hour"
    assert located(tier.value) == [
        (("body", field), "only an offer of tier on_demand has an interruptible price")
    ]
    assert located(price.value) == [(("body", field), "must be at most price_per_gpu_hour")]
    assert located(bulk.value) == [
        (("body", "offers", 1, field), "must be at most price_per_gpu_hour")
    ]
    assert uow.state.offers == {}
    assert uow.published == []
    equal = offer(interruptible_price_per_gpu_hour="0.33")  # at most: equal is fine
    async with uow:
        await offers.submit(uow, seller_id=SELLER, offer=equal, once=once(SELLER))


async def test_a_change_may_set_the_interruptible_price_of_an_on_demand_offer_only(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        on_demand = await offers.submit(uow, seller_id=SELLER, offer=offer(), once=once(SELLER))
        single = offer(tier=Tier.INTERRUPTIBLE)
        spot = await offers.submit(uow, seller_id=SELLER, offer=single, once=once(SELLER))
        await uow.commit()
    before = len(uow.published)
    cheaper = OfferChange(interruptible_price_per_gpu_hour=Decimal("0.25"))
    async with uow:
        await offers.change(uow, seller_id=SELLER, offer_id=on_demand.body["id"], body=cheaper)
        with pytest.raises(RequestValidationError) as refused:
            await offers.change(uow, seller_id=SELLER, offer_id=spot.body["id"], body=cheaper)
        both = OfferChange(
            price_per_gpu_hour=Decimal("0.2"), interruptible_price_per_gpu_hour=Decimal("0.25")
        )
        with pytest.raises(RequestValidationError) as dearer:
            await offers.change(uow, seller_id=SELLER, offer_id=on_demand.body["id"], body=both)
        await uow.commit()
    (sent,) = [m.envelope.payload for m in uow.published[before:]]
    assert (sent.event_type, sent.interruptible_price_per_gpu_hour, sent.gpus) == (
        "offer.change_requested",
        Decimal("0.25"),
        None,
    )
    field = ("body", "interruptible_price_per_gpu_hour")
    assert [loc for loc, _ in located(refused.value)] == [field]
    assert located(dearer.value) == [(field, "must be at most price_per_gpu_hour")]


async def test_an_exhausted_offer_may_still_be_resized_and_is_live_again_when_gpus_return(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        offer_id = await offered(uow)
        full = offer_status(
            offer_id, OfferStatus.EXHAUSTED, 0, seller_id=SELLER, capacity_gpus=4, leased_gpus=4
        )
        await uow.offers.apply_status(full, uow.now)
        await uow.commit()
    async with uow:
        grown = await offers.change(
            uow, seller_id=SELLER, offer_id=offer_id, body=OfferChange(gpus=6)
        )
        back = offer_status(
            offer_id, OfferStatus.LIVE, 2, seller_id=SELLER, capacity_gpus=6, leased_gpus=4
        )
        await uow.offers.apply_status(back, uow.now)
        await uow.commit()
    assert (grown.status, grown.capacity_gpus, grown.leased_gpus) == ("exhausted", 4, 4)
    async with uow:
        shown = await offers.get(uow, SELLER, offer_id)
    assert (shown.status, shown.capacity_gpus, shown.leased_gpus, shown.remaining_gpus) == (
        "live",
        6,
        4,
        2,
    )


def order_in(**changes: Any) -> OrderIn:
    body = {
        "gpu": GPU,
        "gpus": 2,
        "type": "limit",
        "max_price_per_gpu_hour": "1",
        "currency": "EUR",
    }
    return OrderIn.model_validate({**body, **changes})


async def test_an_order_carries_its_rebuy_and_shows_it(uow: MemoryGatewayUnitOfWork) -> None:
    async with uow:
        asked = await orders.place(
            uow,
            buyer_id=BUYER,
            order=order_in(rebuy_on_interruption=True, tier="interruptible"),
            once=once(BUYER),
        )
        plain = await orders.place(uow, buyer_id=BUYER, order=order_in(), once=once(BUYER))
        await uow.commit()
    first, second = (m.envelope.payload for m in uow.published)
    assert (first.rebuy_on_interruption, first.rebuy_of) == (True, None)
    assert (second.rebuy_on_interruption, second.rebuy_of) == (False, None)
    assert (asked.body["rebuy_on_interruption"], asked.body["rebuy_of"]) == (True, None)
    assert (plain.body["rebuy_on_interruption"], plain.body["rebuy_of"]) == (False, None)


def spot_lease(
    lease_id: str, buyer: str = BUYER, started_at: datetime = EPOCH, **fields: Any
) -> LeaseOpened:
    values: dict[str, Any] = {"lease_id": lease_id, "tier": "interruptible", "gpus": 2}
    return lease_opened(buyer, SELLER, started_at=started_at, **(values | fields))


def noticed(lease: LeaseOpened, *, after: timedelta) -> LeaseInterruptionNoticed:
    return lease_noticed(lease, noticed_at=EPOCH, notice=after, cause=InterruptionCause.RECLAIMED)


async def leases_of(uow: MemoryGatewayUnitOfWork, *opened: LeaseOpened) -> None:
    async with uow:
        for lease in opened:
            await uow.leases.apply_opened(lease, uow.now)
        await uow.commit()


async def test_the_machine_polls_none_pending_then_the_notice_and_never_below_zero(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = spot_lease("L1")
    await leases_of(uow, lease)
    async with uow:
        with pytest.raises(ProblemError) as quiet:
            await leases.interruption(uow, BUYER, "L1")
        with pytest.raises(ProblemError) as unknown:
            await leases.interruption(uow, BUYER, "L9")
        with pytest.raises(ProblemError) as theirs:
            await leases.interruption(uow, OTHER, "L1")
        await uow.leases.apply_notice(noticed(lease, after=timedelta(seconds=120)), uow.now)
        await uow.commit()
    assert (quiet.value.status, quiet.value.slug) == (404, "no-interruption")
    assert (unknown.value.status, unknown.value.slug) == (404, "not-found")
    assert (theirs.value.status, theirs.value.slug) == (404, "not-found")
    assert isinstance(uow.clock, ManualClock)
    seen = []
    for step in (timedelta(seconds=30.5), timedelta(seconds=90), timedelta(seconds=60)):
        uow.clock.advance(step)
        async with uow:
            seen.append(await leases.interruption(uow, BUYER, "L1"))
            shown = await leases.get(uow, SELLER, "L1")
    assert [s.seconds_left for s in seen] == [89, 0, 0]  # whole seconds, rounded down
    assert (seen[0].action, seen[0].cause, seen[0].interrupt_at) == (
        "terminate",
        InterruptionCause.RECLAIMED,
        EPOCH + timedelta(seconds=120),
    )
    assert (shown.status, shown.interruption_cause) == (LeaseStatus.INTERRUPTING, "reclaimed")


async def test_a_lease_that_starts_later_is_scheduled_until_then(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    later = EPOCH + timedelta(minutes=2)
    await leases_of(uow, spot_lease("L1", tier="on_demand", started_at=later))
    async with uow:
        before = await leases.get(uow, BUYER, "L1")
        listed = await leases.page(
            uow, LeaseFilter(BUYER, status="scheduled"), limit=5, cursor=None
        )
    assert isinstance(uow.clock, ManualClock)
    uow.clock.advance(timedelta(minutes=2))
    async with uow:
        after = await leases.get(uow, BUYER, "L1")
    assert (before.status, after.status) == (LeaseStatus.SCHEDULED, LeaseStatus.RUNNING)
    assert [item.lease_id for item in listed.items] == ["L1"]


async def test_only_the_seller_reclaims_a_running_interruptible_lease_once_per_key(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    spot, on_demand, ending, rented = (
        spot_lease("L1"),
        spot_lease("L2", tier="on_demand"),
        spot_lease("L3"),
        spot_lease("L4", buyer=BOTH),
    )
    await leases_of(uow, spot, on_demand, ending, rented)
    async with uow:
        await uow.leases.apply_ended(lease_ended(ending, hourly_totals(EPOCH, 1)), uow.now)
        await uow.commit()
    refused = {}
    async with uow:
        for who, lease_id in (
            (OTHER, "L1"),
            (BOTH, "L4"),
            (SELLER, "L2"),
            (SELLER, "L3"),
            (SELLER, "L9"),
        ):
            with pytest.raises(ProblemError) as problem:
                await leases.reclaim(uow, seller_id=who, lease_id=lease_id, once=once(who))
            refused[lease_id] = (problem.value.status, problem.value.slug)
    assert refused == {
        "L1": (404, "not-found"),  # another account's lease
        "L4": (403, "lease-seller-only"),  # the caller rents it: it sees it, nothing leaks
        "L2": (409, "lease-not-interruptible"),
        "L3": (409, "lease-ended"),
        "L9": (404, "not-found"),
    }
    for _ in range(2):
        async with uow:
            answer = await leases.reclaim(
                uow, seller_id=SELLER, lease_id="L1", once=once(SELLER, "r")
            )
            await uow.commit()
    assert (answer.status_code, answer.replayed, answer.body["lease_id"]) == (202, True, "L1")
    assert answer.body["status"] == "running"  # as it stands: the notice comes from billing
    (sent,) = uow.published
    assert (sent.topic.name, sent.key, sent.envelope.event_type) == (
        "capacity.commands",
        GPU,
        "lease.reclaim_requested",
    )
    assert sent.envelope.payload.model_dump(exclude={"requested_at"}) == {
        "lease_id": "L1",
        "buyer_id": BUYER,
        "offer_id": spot.offer_id,
        "seller_id": SELLER,
        "gpu": GPU,
    }
    async with uow:
        await uow.leases.apply_notice(noticed(spot, after=timedelta(minutes=2)), uow.now)
        await uow.commit()
    async with uow:
        with pytest.raises(ProblemError) as again:
            await leases.reclaim(uow, seller_id=SELLER, lease_id="L1", once=once(SELLER, "r2"))
    assert (again.value.status, again.value.slug) == (409, "lease-interrupting")


async def test_a_per_second_lease_accrues_only_up_to_its_interruption(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = spot_lease("L1", billing="second", price_per_gpu_hour=Decimal("3.6"), gpus=1)
    await leases_of(uow, lease)
    async with uow:
        await uow.leases.apply_notice(noticed(lease, after=timedelta(seconds=100)), uow.now)
        await uow.commit()
    assert isinstance(uow.clock, ManualClock)
    uow.clock.advance(timedelta(minutes=10))  # billing's end not read yet
    async with uow:
        shown = await leases.get(uow, BUYER, "L1")
    assert shown.cost_so_far == Decimal("0.1")  # 3.6 an hour for the 100 s to interrupt_at
    assert shown.currency is Currency.USD
