"""Re-buy on interruption, through the lease view's consumer on the memory unit of work: the
batch that reads an interrupted lease's end places the same order again, once per lease."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.orders import OrderPlaced
from gpux_contracts.topics import BILLING_LEASES, ORDERS_BOOK, Topic
from gpux_devinfra.testing.payloads import order_funded
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.rebuy import rebuy_event_id, rebuy_order_id
from gpux_gateway.orders import service as orders
from gpux_gateway.orders.schemas import OrderIn
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock

from ..lease_events import hourly_totals, lease_ended, lease_opened
from .test_gateway_trading_services import once, orders_placed
from .units import with_accounts

pytestmark = pytest.mark.unit

BUYER, SELLER = "buyer-1", "seller-1"
ORDER: dict[str, Any] = {
    "gpu": "rtx-4090",
    "gpus": 4,
    "type": "limit",
    "max_price_per_gpu_hour": "1.2500",
    "currency": "USD",
    "wallet_currency": "EUR",
    "tier": "interruptible",
    "region": "eu-west",
    "hours": 6,
    "time_in_force": "gtc",
    "rebuy_on_interruption": True,
}


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts({BUYER: Role.BUYER})


async def placed(uow: MemoryGatewayUnitOfWork, **changes: Any) -> OrderPlaced:
    """An order the buyer placed through ``POST /v1/orders``'s service; its command."""
    body = OrderIn.model_validate({**ORDER, **changes})
    async with uow:
        made = await orders.place(uow, buyer_id=BUYER, order=body, once=once(BUYER))
        await uow.commit()
    (command,) = [c for c in orders_placed(uow) if c.order_id == made.body["id"]]
    return command


def life(order: OrderPlaced, lease_id: str, *, gpus: int = 2, **end: Any) -> list[Payload]:
    """A lease of the order opened and ended (interrupted, unless ``end`` says otherwise)."""
    opened = lease_opened(
        BUYER,
        SELLER,
        lease_id=lease_id,
        order_id=order.order_id,
        tier="interruptible",
        gpus=gpus,
        started_at=EPOCH,
    )
    fields: dict[str, Any] = {"reason": LeaseEndReason.INTERRUPTED}
    return [opened, lease_ended(opened, hourly_totals(EPOCH, 1), **(fields | end))]


async def apply(uow: MemoryGatewayUnitOfWork, topic: Topic, *events: Envelope[Any]) -> Outcome:
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow)
    return await batch.apply(list(events))


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="billing", occurred_at=EPOCH)


def rebuys(uow: MemoryGatewayUnitOfWork) -> list[tuple[str, OrderPlaced]]:
    """Every order.placed the gateway sent for a re-buy: (event id, command)."""
    return [
        (m.envelope.event_id, m.envelope.payload)
        for m in uow.published
        if isinstance(m.envelope.payload, OrderPlaced) and m.envelope.payload.rebuy_of
    ]


async def test_an_interrupted_lease_is_bought_again_in_the_batch_that_reads_its_end(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    order = await placed(uow)
    before = uow.commits
    outcome = await apply(uow, BILLING_LEASES, *map(event, life(order, "L1")))  # one batch
    assert (outcome.applied, outcome.units, uow.commits - before) == (2, 1, 1)
    ((event_id, again),) = rebuys(uow)
    assert event_id == rebuy_event_id("L1")
    assert again == order.model_copy(
        update={"order_id": rebuy_order_id("L1"), "gpus": 2, "rebuy_of": "L1"}
    )
    (message,) = [m for m in uow.published if m.envelope.event_id == event_id]
    assert (message.topic.name, message.key) == ("orders.commands", "rtx-4090")
    row = uow.state.orders[again.order_id]
    assert (row.status, row.gpus, row.rebuy_on_interruption, row.rebuy_of) == (
        "pending_funds",
        2,
        True,
        "L1",
    )
    assert uow.state.leases["L1"].status == "ended"  # the view's update, in the same unit


async def test_a_replayed_end_places_nothing_more(uow: MemoryGatewayUnitOfWork) -> None:
    order = await placed(uow)
    opened, ended = life(order, "L1")
    first = event(ended)
    await apply(uow, BILLING_LEASES, event(opened), first)
    # The same envelope again (the inbox), and the same end under new event ids (billing's
    # outbox relayed it twice, another source replayed it): one order, one command.
    outcome = await apply(uow, BILLING_LEASES, first, event(ended), event(ended))
    await apply(uow, BILLING_LEASES, event(ended))
    assert (outcome.applied, outcome.duplicate) == (2, 1)
    assert [event_id for event_id, _ in rebuys(uow)] == [rebuy_event_id("L1")]
    assert sum(1 for row in uow.state.orders.values() if row.rebuy_of == "L1") == 1


async def test_a_rebuy_is_bought_again_when_its_own_lease_is_interrupted(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    order = await placed(uow)
    await apply(uow, BILLING_LEASES, *map(event, life(order, "L1")))
    ((_, again),) = rebuys(uow)
    await apply(uow, BILLING_LEASES, *map(event, life(again, "L2", gpus=1)))
    assert [(cmd.order_id, cmd.gpus, cmd.rebuy_of) for _, cmd in rebuys(uow)] == [
        (rebuy_order_id("L1"), 2, "L1"),
        (rebuy_order_id("L2"), 1, "L2"),
    ]


@pytest.mark.parametrize(
    ("changes", "end"),
    [
        ({"rebuy_on_interruption": False}, {}),
        ({}, {"reason": LeaseEndReason.STOPPED}),
        ({}, {"reason": LeaseEndReason.INSUFFICIENT_FUNDS}),
        ({"time_in_force": "gtd", "expires_at": (EPOCH + timedelta(minutes=1)).isoformat()}, {}),
    ],
    ids=["not asked", "stopped", "insufficient funds", "gtd expired"],
)
async def test_nothing_is_bought_again_unless_an_asking_order_was_interrupted_in_time(
    uow: MemoryGatewayUnitOfWork, changes: dict[str, Any], end: dict[str, Any]
) -> None:
    order = await placed(uow, **changes)
    assert isinstance(uow.clock, ManualClock)
    uow.clock.advance(timedelta(minutes=5))  # past the gtd order's expiry
    await apply(uow, BILLING_LEASES, *map(event, life(order, "L1", **end)))
    assert rebuys(uow) == []


async def test_a_suspended_buyer_or_an_order_the_gateway_lacks_is_not_bought_again(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    order = await placed(uow)
    stranger = order.model_copy(update={"order_id": "not-ours"})
    await apply(uow, BILLING_LEASES, *map(event, life(stranger, "L0")))
    async with uow:
        await uow.accounts.set_status(BUYER, AccountStatus.SUSPENDED, uow.now)
        await uow.commit()
    await apply(uow, BILLING_LEASES, *map(event, life(order, "L1")))
    assert rebuys(uow) == []


async def test_an_end_read_before_its_opening_is_not_bought_again(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    order = await placed(uow)
    opened, ended = life(order, "L1")
    await apply(uow, BILLING_LEASES, event(ended), event(opened))
    assert rebuys(uow) == []
    assert uow.state.leases["L1"].end_reason == "interrupted"


async def test_a_market_order_is_bought_again_uncapped_unless_the_buyer_capped_it(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    market = {"type": "market", "time_in_force": "ioc", "max_price_per_gpu_hour": None}
    uncapped = await placed(uow, **market)
    capped = await placed(uow, **{**market, "max_price_per_gpu_hour": "2"})
    funded = [order_funded(o, held="4.2", cap="1.05") for o in (uncapped, capped)]
    await apply(uow, ORDERS_BOOK, *map(event, funded))
    assert uow.state.orders[uncapped.order_id].max_price_micros == 1_050_000  # shown: billing's
    leases = [*life(uncapped, "L1"), *life(capped, "L2")]
    await apply(uow, BILLING_LEASES, *map(event, leases))
    assert [(cmd.rebuy_of, cmd.max_price_per_gpu_hour) for _, cmd in rebuys(uow)] == [
        ("L1", None),
        ("L2", Decimal("2")),
    ]
