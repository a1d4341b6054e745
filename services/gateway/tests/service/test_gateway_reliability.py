"""Seller reliability on the memory unit of work: the view consumer keeps each offer's and
each seller's counts with the largest total, offers show them, orders carry their minimum
(and a re-buy keeps it)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.accounts import Role
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.orders import OrderPlaced
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import BILLING_LEASES, BILLING_RELIABILITY
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.rebuy import rebuy_order_id
from gpux_gateway.offers import service as offers
from gpux_gateway.orders import service as orders
from gpux_gateway.orders.schemas import OrderIn
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler, Outcome

from ..lease_events import hourly_totals, lease_ended, lease_opened
from ..reliability_events import counts, reliability_changed
from .test_gateway_trading_services import offer, once, orders_placed
from .units import with_accounts

pytestmark = pytest.mark.unit

SELLER, OTHER, BUYER = "seller-1", "seller-2", "buyer-1"
ZERO = {"ready_in_time": 0, "failed": 0, "reclaimed": 0, "rate": None}


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts({SELLER: Role.SELLER, OTHER: Role.SELLER, BUYER: Role.BUYER})


def changed(
    offer_id: str,
    offer_counts: ReliabilityCounts,
    seller_counts: ReliabilityCounts,
    seller_id: str = SELLER,
) -> Envelope[Any]:
    payload = reliability_changed(seller_id, offer_id, offer_counts, seller_counts, lease_id="L1")
    return wrap(payload, producer="billing", occurred_at=EPOCH)


async def apply(uow: MemoryGatewayUnitOfWork, *events: Envelope[Any]) -> Outcome:
    """The events as one batch of the reliability view's consumer."""
    batch = BatchHandler(BILLING_RELIABILITY, HANDLERS_BY_TOPIC[BILLING_RELIABILITY], lambda: uow)
    return await batch.apply(list(events))


async def submitted(uow: MemoryGatewayUnitOfWork, seller_id: str = SELLER) -> dict[str, Any]:
    async with uow:
        made = await offers.submit(uow, seller_id=seller_id, offer=offer(), once=once(seller_id))
        await uow.commit()
    return made.body


async def shown(uow: MemoryGatewayUnitOfWork, offer_id: str) -> dict[str, Any]:
    async with uow:
        out = await offers.get(uow, SELLER, offer_id)
    return out.reliability.model_dump(mode="json")


async def test_an_offer_without_a_record_shows_zeros_and_no_rate(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    made = await submitted(uow)
    assert made["reliability"] == {"offer": ZERO, "seller": ZERO}
    assert await shown(uow, made["id"]) == {"offer": ZERO, "seller": ZERO}


async def test_counts_with_the_largest_total_stay_whatever_order_they_are_read_in(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    first, second = (await submitted(uow))["id"], (await submitted(uow))["id"]
    outcome = await apply(
        uow,
        changed(first, counts(ready=1), counts(ready=1)),
        changed(second, counts(ready=1, failed=1), counts(ready=2, failed=1)),
        changed(first, counts(ready=1), counts(ready=1)),  # late: the seller counted more
    )
    assert (outcome.applied, outcome.units) == (3, 1)
    late = changed(second, counts(), counts(ready=1, failed=1))
    assert (await apply(uow, late)).applied == 1
    seller = {"ready_in_time": 2, "failed": 1, "reclaimed": 0, "rate": "0.6666"}
    assert await shown(uow, first) == {
        "offer": {"ready_in_time": 1, "failed": 0, "reclaimed": 0, "rate": "1.0000"},
        "seller": seller,
    }
    assert await shown(uow, second) == {
        "offer": {"ready_in_time": 1, "failed": 1, "reclaimed": 0, "rate": "0.5000"},
        "seller": seller,
    }
    async with uow:
        page = await offers.page(uow, SELLER, limit=10, cursor=None)
    assert [o.reliability.seller.rate for o in page.items] == [Decimal("0.6666")] * 2


async def test_a_replayed_change_is_applied_once_and_equal_totals_take_the_later(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    offer_id = (await submitted(uow))["id"]
    once_more = changed(offer_id, counts(ready=1), counts(ready=1))
    assert (await apply(uow, once_more, once_more)).applied == 1
    await apply(uow, changed(offer_id, counts(reclaimed=1), counts(reclaimed=1)))
    record = await shown(uow, offer_id)
    assert record["offer"] == {"ready_in_time": 0, "failed": 0, "reclaimed": 1, "rate": "0.0000"}


async def test_a_seller_sees_only_its_own_counts(uow: MemoryGatewayUnitOfWork) -> None:
    mine = (await submitted(uow))["id"]
    await apply(uow, changed(mine, counts(failed=3), counts(failed=3), seller_id=OTHER))
    assert await shown(uow, mine) == {"offer": ZERO, "seller": ZERO}


async def placed(uow: MemoryGatewayUnitOfWork, **changes: Any) -> OrderPlaced:
    body: dict[str, Any] = {
        "gpu": "rtx-4090",
        "gpus": 2,
        "type": "limit",
        "max_price_per_gpu_hour": "1.00",
        "currency": "EUR",
        "tier": "interruptible",
        "rebuy_on_interruption": True,
    }
    async with uow:
        made = await orders.place(
            uow, buyer_id=BUYER, order=OrderIn.model_validate(body | changes), once=once(BUYER)
        )
        await uow.commit()
    assert made.body["min_reliability"] == changes.get("min_reliability")
    (command,) = [c for c in orders_placed(uow) if c.order_id == made.body["id"]]
    return command


async def test_an_orders_minimum_is_sent_shown_and_kept_by_its_rebuy(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    order = await placed(uow, min_reliability="0.9500")
    assert order.min_reliability == Decimal("0.95")
    opened = lease_opened(
        BUYER,
        SELLER,
        lease_id="L1",
        order_id=order.order_id,
        tier="interruptible",
        gpus=2,
        started_at=EPOCH,
    )
    ended = lease_ended(opened, hourly_totals(EPOCH, 1), reason=LeaseEndReason.INTERRUPTED)
    batch = BatchHandler(BILLING_LEASES, HANDLERS_BY_TOPIC[BILLING_LEASES], lambda: uow)
    await batch.apply([wrap(p, producer="billing", occurred_at=EPOCH) for p in (opened, ended)])
    (again,) = [c for c in orders_placed(uow) if c.rebuy_of == "L1"]
    assert (again.order_id, again.min_reliability) == (rebuy_order_id("L1"), Decimal("0.95"))
    async with uow:
        shown_again = await orders.get(uow, BUYER, again.order_id)
    assert shown_again.min_reliability == Decimal("0.9500")


async def test_an_order_without_a_minimum_takes_any_seller(uow: MemoryGatewayUnitOfWork) -> None:
    assert (await placed(uow)).min_reliability is None
