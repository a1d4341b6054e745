"""Billing's two forms of announcing charges give the same views: each charge on its own
(``lease.charged``, ``ledger.posted``) or the settlement loop's aggregated events
(``leases.settled``, ``ledger.batch_posted``), through the handlers of ``HANDLERS_BY_TOPIC`` on
the memory unit of work, as the consumers apply them (a rolling upgrade mixes both)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.events import Payload, wrap
from gpux_contracts.leases import LeaseCharged, LeaseEndReason, LedgerLine, LedgerPosted
from gpux_contracts.money import Currency
from gpux_contracts.settlement import LedgerBatchPosted
from gpux_contracts.topics import BILLING_LEASES, BILLING_LEDGER, Topic
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.leases import service as leases
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler

from ..lease_events import (
    hourly_totals,
    lease_charged,
    lease_charges,
    lease_ended,
    lease_opened,
    leases_settled,
)

pytestmark = pytest.mark.unit

BUYERS, SELLER = ("b1", "b2"), "s1"
OPENED = [
    lease_opened(buyer, SELLER, lease_id=f"L{i}", started_at=EPOCH, hours=3)
    for i, buyer in enumerate((*BUYERS, BUYERS[0]))
]


def charges(period: int) -> list[LeaseCharged]:
    """Period ``period`` of every lease, charged."""
    return [
        lease_charged(
            opened,
            hourly_totals(EPOCH, period),
            transfer_id=f"charge:{opened.lease_id}:{period}",
            period_start=EPOCH + timedelta(hours=period - 1),
        )
        for opened in OPENED
    ]


def posted(charged: LeaseCharged) -> LedgerPosted:
    """The ledger's announcement of a charge: the buyer pays, the seller earns."""
    return LedgerPosted(
        transfer_id=charged.transfer_id,
        kind="charge",
        created_at=charged.period_start,
        reference=f"lease {charged.lease_id}",
        lines=[
            LedgerLine(
                owner=charged.buyer_id, currency=Currency.EUR, kind="held", amount=-charged.paid
            ),
            LedgerLine(
                owner=SELLER,
                currency=Currency.USD,
                kind="seller_payable",
                amount=charged.seller_amount,
            ),
        ],
    )


async def apply(uow: MemoryGatewayUnitOfWork, topic: Topic, payloads: list[Payload]) -> None:
    batch = BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow)
    outcome = await batch.apply([wrap(p, producer="billing", occurred_at=EPOCH) for p in payloads])
    assert outcome.applied == len(payloads)


async def views(uow: MemoryGatewayUnitOfWork) -> list[Any]:
    """Everything the parties see: leases, earnings and statements."""
    async with uow:
        seen: list[Any] = [await leases.earnings(uow, SELLER)]
        for account in (*BUYERS, SELLER):
            seen.append(await leases.page(uow, LeaseFilter(account), limit=10, cursor=None))
            seen.append(await leases.statement(uow, account, currency=None, limit=50, cursor=None))
    return seen


async def test_aggregated_charges_and_transfers_give_the_views_per_lease_events_give() -> None:
    first, second = charges(1), charges(2)
    ended = lease_ended(OPENED[1], hourly_totals(EPOCH, 2), reason=LeaseEndReason.STOPPED)
    per_lease, aggregated = MemoryGatewayUnitOfWork(), MemoryGatewayUnitOfWork()
    # One by one: every charge and every transfer its own event.
    await apply(per_lease, BILLING_LEASES, [*OPENED, *first, *second, ended])
    await apply(per_lease, BILLING_LEDGER, [posted(c) for c in (*first, *second)])
    # Aggregated: the first hour a batch of its own, the second in two chunks; one lease's
    # first two periods in one item; the ledger's transfers in two batches.
    items = [lease_charges(c) for c in first[:2]] + [lease_charges(first[2], second[2])]
    await apply(aggregated, BILLING_LEASES, [*OPENED, leases_settled(*items)])
    tail = [leases_settled(lease_charges(second[0])), leases_settled(lease_charges(second[1]))]
    await apply(aggregated, BILLING_LEASES, [*tail, ended])
    transfers = [posted(c) for c in (*first, *second)]
    await apply(
        aggregated,
        BILLING_LEDGER,
        [LedgerBatchPosted(transfers=transfers[:4]), LedgerBatchPosted(transfers=transfers[4:])],
    )
    expected = await views(per_lease)
    assert await views(aggregated) == expected
    earned = expected[0].items[0]
    assert (earned.gross, earned.leases, earned.running) == (Decimal(6), 3, 2)


async def test_a_replayed_batch_adds_no_statement_line() -> None:
    uow = MemoryGatewayUnitOfWork()
    batch = LedgerBatchPosted(transfers=[posted(c) for c in charges(1)])
    await apply(uow, BILLING_LEDGER, [batch])
    await apply(uow, BILLING_LEDGER, [batch, LedgerBatchPosted(transfers=batch.transfers[:1])])
    async with uow:
        lines = await uow.ledger.page(BUYERS[0], currency=None, before=None, limit=10)
    assert sorted(line.transfer_id for line in lines) == ["charge:L0:1", "charge:L2:1"]
