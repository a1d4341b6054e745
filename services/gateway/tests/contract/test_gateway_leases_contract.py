"""Leases and statement lines on memory and on PostgreSQL: billing's events, in any order."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.events import Payload
from gpux_contracts.ids import new_id
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseEndReason,
    LeaseLowBalance,
    LeaseOpened,
    LeaseTotals,
    LedgerLine,
    LedgerPosted,
)
from gpux_contracts.money import Currency
from gpux_contracts.settlement import LeasesSettled
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.leases.repository import LeaseFilter, LeaseRow
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork

from ..lease_events import (
    hourly_totals,
    lease_charged,
    lease_charges,
    lease_ended,
    lease_low_balance,
    lease_opened,
    leases_settled,
)
from .conftest import Units

pytestmark = pytest.mark.integration


def totals(period: int) -> LeaseTotals:
    return hourly_totals(EPOCH, period, paid=Decimal("0.9") * period)


def life(lease_id: str, buyer: str, seller: str, *, batched: bool = False) -> list[Payload]:
    """A lease's events: opened, charged twice, a low-balance warning (twice), ended; each
    charge a ``lease.charged`` or (``batched``) the lease's item of a ``leases.settled``."""
    opened = lease_opened(buyer, seller, lease_id=lease_id, started_at=EPOCH, hours=3)
    charges = [lease_charged(opened, totals(1)), lease_charged(opened, totals(2))]
    return [
        opened,
        *(leases_settled(lease_charges(c)) if batched else c for c in charges),
        lease_low_balance(opened, EPOCH + timedelta(minutes=100)),
        lease_low_balance(opened, EPOCH + timedelta(minutes=90)),
        lease_ended(
            opened,
            totals(2),
            reason=LeaseEndReason.INSUFFICIENT_FUNDS,
            unpaid=Decimal("0.25"),
        ),
    ]


async def apply(uow: GatewayUnitOfWork, payload: Payload) -> None:
    if isinstance(payload, LeaseOpened):
        await uow.leases.apply_opened(payload, uow.now)
    elif isinstance(payload, LeaseCharged):
        await uow.leases.apply_charged(payload, uow.now)
    elif isinstance(payload, LeasesSettled):
        await uow.leases.apply_settled(payload.leases, uow.now)
    elif isinstance(payload, LeaseLowBalance):
        await uow.leases.apply_low_balance(payload, uow.now)
    else:
        assert isinstance(payload, LeaseEnded)
        await uow.leases.apply_ended(payload, uow.now)


Apply = Callable[[GatewayUnitOfWork, Payload], Awaitable[None]]


async def in_order(
    units: Units, events: list[Payload], order: Sequence[int], how: Apply = apply
) -> None:
    """Apply ``events`` in ``order`` in one unit (``how`` applies one), then commit."""
    async with units() as uow:
        for index in order:
            await how(uow, events[index])
        await uow.commit()


def final(row: LeaseRow | None) -> tuple[object, ...]:
    assert row is not None
    return (
        row.opened,
        row.status,
        row.end_reason,
        row.ended_at,
        row.unpaid_micros,
        row.period,
        row.charged_through,
        row.total_charged_micros,
        row.total_paid_micros,
        row.seller_id,
        row.currency,
        row.low_balance_at,
        row.gpus,
    )


EXPECTED = (
    True,
    "ended",
    "insufficient_funds",
    EPOCH + timedelta(hours=2),
    250_000,
    2,
    EPOCH + timedelta(hours=2),
    2_000_000,
    1_800_000,
    None,  # replaced by the seller below
    "USD",
    EPOCH + timedelta(minutes=90),
    1,
)


# Every order of a few interesting ones (the whole set of 720 would take a while on PostgreSQL).
ORDERS = [
    (0, 1, 2, 3, 4, 5),
    (5, 4, 3, 2, 1, 0),
    (2, 5, 1, 3, 0, 4),
    (1, 5, 3, 0, 2, 4),
    *itertools.islice(itertools.permutations(range(6)), 100, 700, 150),
]


@pytest.mark.parametrize("batched", [False, True], ids=["per lease", "aggregated"])
@pytest.mark.parametrize("order", ORDERS)
async def test_a_leases_events_in_any_order_and_in_one_batch_give_the_same_lease(
    units: Units, order: tuple[int, ...], batched: bool
) -> None:
    lease_id, buyer, seller = new_id(), new_id(), new_id()
    events = life(lease_id, buyer, seller, batched=batched)
    await in_order(units, events, order)
    async with units() as uow:
        row = await uow.leases.get(buyer, lease_id)
        assert await uow.leases.get(seller, lease_id) == row
        assert await uow.leases.get(new_id(), lease_id) is None
    assert final(row)[:9] == EXPECTED[:9]
    assert final(row)[9:] == (seller, *EXPECTED[10:])


async def test_one_aggregated_event_of_many_leases_gives_what_their_charges_give(
    units: Units,
) -> None:
    buyer, seller = new_id(), new_id()
    one_by_one, aggregated = [new_id() for _ in range(3)], [new_id() for _ in range(3)]
    items = []
    async with units() as uow:
        for ours, theirs in zip(one_by_one, aggregated, strict=True):
            opened, charged, second = life(ours, buyer, seller)[:3]
            for payload in (opened, charged, second):
                await apply(uow, payload)
            assert isinstance(opened, LeaseOpened)
            assert isinstance(charged, LeaseCharged)
            assert isinstance(second, LeaseCharged)
            await apply(uow, opened.model_copy(update={"lease_id": theirs}))
            items.append(
                lease_charges(
                    *(c.model_copy(update={"lease_id": theirs}) for c in (charged, second))
                )
            )
        await apply(uow, leases_settled(*items))
        await uow.commit()
    async with units() as uow:
        for ours, theirs in zip(one_by_one, aggregated, strict=True):
            expected = await uow.leases.get(buyer, ours)
            got = await uow.leases.get(buyer, theirs)
            assert expected is not None
            assert got is not None
            assert got.period == 2
            assert dataclasses.replace(got, id=ours) == expected


async def test_a_lease_is_not_shown_before_its_lease_opened(units: Units) -> None:
    lease_id, buyer, seller = new_id(), new_id(), new_id()
    charge = life(lease_id, buyer, seller)[1]
    async with units() as uow:
        await apply(uow, charge)
        await uow.commit()
    async with units() as uow:
        assert await uow.leases.get(buyer, lease_id) is None
        found = await uow.leases.page(LeaseFilter(buyer), after=None, limit=5, now=uow.now)
        assert found == []
        assert await uow.leases.earnings(seller) == []


async def test_pages_by_side_and_status_and_earnings_per_currency(units: Units) -> None:
    buyer, seller = new_id(), new_id()
    first, second = sorted(new_id() for _ in range(2))
    async with units() as uow:
        for lease_id in (first, second):
            for event in life(lease_id, buyer, seller)[:3]:
                await apply(uow, event)
        await apply(uow, life(second, buyer, seller)[5])
        await uow.commit()
    async with units() as uow:
        rented = await uow.leases.page(
            LeaseFilter(buyer, role="buyer"), after=None, limit=5, now=uow.now
        )
        provided = await uow.leases.page(
            LeaseFilter(seller, status="running"), after=None, limit=5, now=uow.now
        )
        after = await uow.leases.page(
            LeaseFilter(seller, role="seller"), after=first, limit=5, now=uow.now
        )
        none = await uow.leases.page(
            LeaseFilter(buyer, role="seller"), after=None, limit=5, now=uow.now
        )
        (earned,) = await uow.leases.earnings(seller)
    assert [r.id for r in rented] == [first, second]
    assert [r.id for r in provided] == [first]
    assert [r.id for r in after] == [second]
    assert none == []
    assert (earned.currency, earned.gross_micros, earned.leases, earned.running) == (
        "USD",
        4_000_000,
        2,
        1,
    )


async def test_statement_lines_are_kept_once_newest_first_by_cursor(units: Units) -> None:
    owner = new_id()

    def posted(n: int, currency: Currency) -> LedgerPosted:
        return LedgerPosted(
            transfer_id=f"{owner}:{n}",
            kind="fx" if currency is Currency.USD else "topup",
            created_at=EPOCH + timedelta(seconds=n // 2),  # two lines per instant
            fx_rate=Decimal("1.0850") if currency is Currency.USD else None,
            fx_base=Currency.EUR if currency is Currency.USD else None,
            fx_quote=Currency.USD if currency is Currency.USD else None,
            lines=[
                LedgerLine(owner=owner, currency=currency, kind="available", amount=Decimal(n)),
                LedgerLine(owner="platform", currency=currency, kind="cash", amount=-Decimal(n)),
            ],
        )

    events = [posted(n, Currency.USD if n % 3 == 0 else Currency.EUR) for n in range(6)]
    async with units() as uow:
        for event in (*events, events[2]):
            await uow.ledger.add_posted(event)
        await uow.commit()
    async with units() as uow:
        newest = await uow.ledger.page(owner, currency=None, before=None, limit=4)
        rest = await uow.ledger.page(owner, currency=None, before=newest[-1].seq, limit=4)
        usd = await uow.ledger.page(owner, currency="USD", before=None, limit=4)
        gone = await uow.ledger.page(owner, currency=None, before=-1, limit=4)
    amounts = [line.amount_micros // 1_000_000 for line in newest + rest]
    assert amounts == [5, 4, 3, 2, 1, 0]
    assert [(line.transfer_kind, line.fx_rate) for line in usd] == [
        ("fx", Decimal("1.0850")),
        ("fx", Decimal("1.0850")),
    ]
    assert gone == []
