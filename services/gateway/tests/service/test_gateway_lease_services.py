"""Leases as their parties see them, the stop command, statements and earnings, on the memory
unit of work."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.leases import (
    LeaseEnded,
    LeaseEndReason,
    LeaseOpened,
    LeaseTotals,
    LedgerLine,
    LedgerPosted,
)
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.leases import service as leases
from gpux_gateway.leases.repository import LeaseFilter
from gpux_platform.clock import ManualClock
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit

BUYER, SELLER = "buyer-1", "seller-1"


def opened(lease_id: str, billing: BillingGranularity) -> LeaseOpened:
    return LeaseOpened(
        lease_id=lease_id,
        order_id="o1",
        offer_id="f1",
        buyer_id=BUYER,
        seller_id=SELLER,
        gpu="rtx-4090",
        tier="on_demand",
        gpus=2,
        price_per_gpu_hour=Decimal("0.36"),
        currency=Currency.USD,
        wallet_currency=Currency.USD,
        billing=billing,
        started_at=EPOCH,
    )


@pytest.fixture
async def uow() -> MemoryGatewayUnitOfWork:
    """Two leases of one buyer and seller: a running per-second one, an ended hourly one."""
    clock = ManualClock(EPOCH + timedelta(minutes=10))
    unit = MemoryGatewayUnitOfWork(clock)
    async with unit:
        await unit.leases.apply_opened(opened("L1", BillingGranularity.SECOND), unit.now)
        await unit.leases.apply_opened(opened("L2", BillingGranularity.HOUR), unit.now)
        totals = LeaseTotals(
            period=1,
            charged_through=EPOCH + timedelta(hours=1),
            total_charged=Decimal("0.72"),
            total_paid=Decimal("0.72"),
            total_fee=Decimal("0.07"),
            total_seller=Decimal("0.65"),
        )
        ended = LeaseEnded(
            lease_id="L2",
            buyer_id=BUYER,
            seller_id=SELLER,
            reason=LeaseEndReason.STOPPED,
            ended_at=EPOCH + timedelta(hours=1),
            currency=Currency.USD,
            wallet_currency=Currency.USD,
            unpaid=Decimal(0),
            totals=totals,
        )
        await unit.leases.apply_ended(ended, unit.now)
        await unit.commit()
    return unit


def once(key: str | None = None) -> Once:
    return Once(scope=BUYER, key=key, fingerprint="f", ttl=timedelta(hours=48))


async def test_a_running_per_second_lease_shows_its_cost_up_to_now(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        running = await leases.get(uow, SELLER, "L1")
        page = await leases.page(uow, LeaseFilter(BUYER, role="buyer"), limit=1, cursor=None)
        rest = await leases.page(uow, LeaseFilter(BUYER), limit=1, cursor="L1")
        as_seller = await leases.page(uow, LeaseFilter(BUYER, role="seller"), limit=5, cursor=None)
    assert running.cost_so_far == Decimal("0.12")  # 0.36 × 2 GPUs × 600 s / 3600
    assert ([i.lease_id for i in page.items], page.next_cursor) == (["L1"], "L1")
    assert ([i.lease_id for i in rest.items], rest.next_cursor) == (["L2"], None)
    assert as_seller.items == []


async def test_only_the_buyer_stops_a_running_lease_once_per_key(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        with pytest.raises(ProblemError) as ended:
            await leases.stop(uow, buyer_id=BUYER, lease_id="L2", once=once())
        with pytest.raises(ProblemError) as missing:
            await leases.stop(uow, buyer_id=BUYER, lease_id="L9", once=once())
        with pytest.raises(ProblemError) as seller:
            await leases.stop(uow, buyer_id=SELLER, lease_id="L1", once=once())
    assert (ended.value.status, missing.value.status) == (409, 404)
    assert (seller.value.status, seller.value.slug) == (403, "lease-buyer-only")
    for _ in range(2):
        async with uow:
            stopped = await leases.stop(uow, buyer_id=BUYER, lease_id="L1", once=once("s"))
            await uow.commit()
    assert stopped.replayed
    assert [m.envelope.event_type for m in uow.published] == ["lease.stop_requested"]


async def test_earnings_and_the_statement(uow: MemoryGatewayUnitOfWork) -> None:
    async with uow:
        for n in range(3):
            line = LedgerLine(owner=BUYER, currency=Currency.USD, kind="available", amount=n)
            posted = LedgerPosted(
                transfer_id=f"t{n}",
                kind="topup",
                created_at=EPOCH + timedelta(seconds=n),
                lines=[line],
            )
            await uow.ledger.add_posted(posted)
        await uow.commit()
    async with uow:
        earned = await leases.earnings(uow, SELLER)
        newest = await leases.statement(uow, BUYER, currency="USD", limit=2, cursor=None)
        assert newest.next_cursor is not None
        oldest = await leases.statement(
            uow, BUYER, currency=None, limit=2, cursor=newest.next_cursor
        )
    (usd,) = earned.items
    assert (usd.gross, usd.fee, usd.net, usd.leases, usd.running) == (
        Decimal("0.72"),
        Decimal("0.07"),
        Decimal("0.65"),
        2,
        1,
    )
    assert [i.transfer_id for i in newest.items + oldest.items] == ["t2", "t1", "t0"]
    assert oldest.next_cursor is None
