"""The lease's delivery on memory and on PostgreSQL: a provisioning lease's events in any
order, the orders' SSH keys, the buyer's chosen keys, and the access handoff's tables (sealed
details replaced, read by the buyer only, reports claimed once, the set-based erasure)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest

from gpux_contracts.events import Payload
from gpux_contracts.ids import new_id
from gpux_contracts.leases import (
    LeaseEnded,
    LeaseFailure,
    LeaseOpened,
    LeaseReady,
)
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderPlaced, OrderTier, OrderType, TimeInForce
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.domain.handoff import Sealed
from gpux_gateway.domain.ssh_keys import SshKeyType
from gpux_gateway.handoff.repository import LeaseAccessRow, ReportKind
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.ssh_keys.repository import SshKeyRow

from ..lease_events import lease_failed, lease_opened, lease_ready
from .accounts import an_account
from .conftest import Units

pytestmark = pytest.mark.integration

DEADLINE = EPOCH + timedelta(minutes=10)
READY_AT = EPOCH + timedelta(minutes=4)


async def apply(uow: GatewayUnitOfWork, payload: Payload) -> None:
    if isinstance(payload, LeaseOpened):
        await uow.leases.apply_opened(payload, uow.now)
    elif isinstance(payload, LeaseReady):
        await uow.leases.apply_ready(payload, uow.now)
    else:
        assert isinstance(payload, LeaseEnded)
        await uow.leases.apply_ended(payload, uow.now)


def provisioning(buyer: str, seller: str, hours: int | None = None) -> LeaseOpened:
    return lease_opened(
        buyer,
        seller,
        lease_id=new_id(),
        started_at=EPOCH,
        hours=hours,
        provisioning_deadline=DEADLINE,
    )


def failed(lease: LeaseOpened, ended_at: datetime = DEADLINE) -> LeaseEnded:
    return lease_failed(
        lease, LeaseFailure.PROVISIONING_TIMEOUT, ended_at=ended_at, charged_through=EPOCH
    )


async def one_unit(units: Units, *payloads: Payload) -> None:
    async with units() as uow:
        for payload in payloads:
            await apply(uow, payload)
        await uow.commit()


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
async def test_opened_then_ready_runs_in_any_order_and_the_first_ready_at_stays(
    units: Units, order: tuple[int, ...]
) -> None:
    lease = provisioning(new_id(), new_id(), hours=2)
    assert lease.ends_at == EPOCH + timedelta(hours=2)
    events: list[Payload] = [
        lease,
        lease_ready(lease, READY_AT),
        lease_ready(lease, READY_AT + timedelta(minutes=1)),
    ]
    # Two readies from one lease carry one ready_at in practice: the earlier read stays.
    await one_unit(units, *(events[i] for i in order))
    async with units() as uow:
        row = await uow.leases.get(lease.buyer_id, lease.lease_id)
    assert row is not None
    expected_ready = (
        READY_AT if order.index(1) < order.index(2) else READY_AT + timedelta(minutes=1)
    )
    assert (row.status, row.provisioning_deadline, row.ready_at, row.ends_at) == (
        "running",
        DEADLINE,
        expected_ready,
        expected_ready + timedelta(hours=2),  # the first ready's end, whenever opened came
    )


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
async def test_a_failed_end_stays_failed_whatever_comes_after(
    units: Units, order: tuple[int, ...]
) -> None:
    lease = provisioning(new_id(), new_id())
    ended = failed(lease)
    events: list[Payload] = [lease, ended, lease_ready(lease, READY_AT)]
    await one_unit(units, *(events[i] for i in order))
    async with units() as uow:
        row = await uow.leases.get(lease.buyer_id, lease.lease_id)
    assert row is not None
    assert (row.status, row.end_reason, row.failure, row.ended_at) == (
        "failed",
        "failed",
        "provisioning_timeout",
        DEADLINE,
    )


async def test_an_opening_without_a_deadline_runs_and_statuses_page_as_shown(
    units: Units,
) -> None:
    buyer, seller = new_id(), new_id()
    plain = lease_opened(buyer, seller, lease_id=new_id(), started_at=EPOCH)
    waiting, broken = provisioning(buyer, seller), provisioning(buyer, seller)
    await one_unit(units, plain, waiting, broken, failed(broken))
    now = EPOCH + timedelta(minutes=1)
    async with units() as uow:
        for status, lease in (("running", plain), ("provisioning", waiting), ("failed", broken)):
            page = await uow.leases.page(
                LeaseFilter(buyer, status=status), after=None, limit=10, now=now
            )
            assert [r.id for r in page] == [lease.lease_id], status


def a_key(account_id: str, n: int) -> SshKeyRow:
    return SshKeyRow(
        id=new_id(),
        account_id=account_id,
        name=f"key {n}",
        type=SshKeyType.ED25519,
        public_key=f"ssh-ed25519 AAAA{n}",
        fingerprint=f"SHA256:{n}",
        bits=None,
        comment="",
        created_at=EPOCH,
    )


async def test_the_keys_listed_are_the_accounts_own_among_those_named(units: Units) -> None:
    alice, bob = await an_account(units), await an_account(units)
    mine = sorted((a_key(alice, i) for i in range(3)), key=lambda k: k.id)
    theirs = a_key(bob, 9)
    async with units() as uow:
        for key in [*mine, theirs]:
            await uow.ssh_keys.add(key)
        await uow.commit()
    async with units() as uow:
        assert await uow.ssh_keys.listed(alice, None) == mine
        named = [mine[2].id, theirs.id, "missing", mine[0].id]
        assert await uow.ssh_keys.listed(alice, named) == [mine[0], mine[2]]
        assert await uow.ssh_keys.listed(alice, []) == []


async def test_an_order_keeps_its_ssh_key_ids(units: Units) -> None:
    buyer = await an_account(units)
    placed = OrderPlaced(
        order_id=new_id(),
        buyer_id=buyer,
        gpu="rtx-4090",
        gpus=1,
        type=OrderType.MARKET,
        currency=Currency.USD,
        tier=OrderTier.ANY,
        time_in_force=TimeInForce.IOC,
    )
    async with units() as uow:
        row = await uow.orders.add(placed, uow.now, ssh_key_ids=["k2", "k1"])
        plain = await uow.orders.add(placed.model_copy(update={"order_id": new_id()}), uow.now)
        await uow.commit()
    assert list(row.ssh_key_ids) == ["k2", "k1"]
    async with units() as uow:
        stored = await uow.orders.get(buyer, placed.order_id)
        assert stored is not None
        assert list(stored.ssh_key_ids) == ["k2", "k1"]
        again = await uow.orders.get(buyer, plain.id)
        assert again is not None
        assert list(again.ssh_key_ids) == []


def sealed(tag: bytes) -> Sealed:
    return Sealed(key_id="k1", nonce=tag * 12, ciphertext=tag * 40)


async def test_access_is_replaced_read_by_its_buyer_and_reports_claimed_once(
    units: Units,
) -> None:
    lease_id, buyer, seller = new_id(), new_id(), new_id()
    first = LeaseAccessRow(lease_id, buyer, seller, sealed(b"a"), posted_at=EPOCH)
    later = EPOCH + timedelta(minutes=1)
    async with units() as uow:
        await uow.lease_access.put(first)
        await uow.lease_access.put(LeaseAccessRow(lease_id, buyer, seller, sealed(b"b"), later))
        assert await uow.lease_access.claim_report(lease_id, ReportKind.READY, EPOCH)
        assert not await uow.lease_access.claim_report(lease_id, ReportKind.READY, later)
        assert await uow.lease_access.claim_report(lease_id, ReportKind.FAILURE, later)
        await uow.commit()
    async with units() as uow:
        got = await uow.lease_access.for_buyer(buyer, lease_id)
        assert got == LeaseAccessRow(lease_id, buyer, seller, sealed(b"b"), later)
        assert await uow.lease_access.for_buyer(seller, lease_id) is None
        assert await uow.lease_access.for_buyer(buyer, new_id()) is None
        assert not await uow.lease_access.claim_report(lease_id, ReportKind.FAILURE, later)


async def test_erasure_takes_every_lease_over_before_the_cutoff_and_keeps_the_row(
    units: Units,
) -> None:
    buyer, seller = new_id(), new_id()
    early, late, running = (provisioning(buyer, seller) for _ in range(3))
    await one_unit(
        units,
        early,
        late,
        running,
        failed(early, EPOCH + timedelta(minutes=5)),
        failed(late, EPOCH + timedelta(minutes=20)),
    )
    async with units() as uow:
        for lease in (early, late, running):
            await uow.lease_access.put(
                LeaseAccessRow(lease.lease_id, buyer, seller, sealed(b"x"), posted_at=EPOCH)
            )
        await uow.commit()
    cutoff, now = EPOCH + timedelta(minutes=10), EPOCH + timedelta(days=1)
    async with units() as uow:
        erased = await uow.lease_access.erase(ended_before=cutoff, now=now)
        await uow.commit()
    assert erased >= 1  # PostgreSQL's session database may hold other tests' rows
    async with units() as uow:
        gone = await uow.lease_access.for_buyer(buyer, early.lease_id)
        assert gone == LeaseAccessRow(
            early.lease_id, buyer, seller, None, posted_at=EPOCH, erased_at=now
        )
        for kept in (late, running):
            row = await uow.lease_access.for_buyer(buyer, kept.lease_id)
            assert row is not None
            assert row.sealed == sealed(b"x")
        assert await uow.lease_access.erase(ended_before=cutoff, now=now) == 0
