"""The lease's delivery lifecycle on PostgreSQL (billing's real unit of work): a trade with a
provisioning timeout stores its lease provisioning (``provisioning_deadline``, no
``ready_at``, nothing charged); the seller's ready report writes ``ready_at`` and the new end
and charges the first hour; the settlement loop fails a lease at its deadline (released
whole, ``lease.released``); a report before its trade waits in
``billing.pending_lease_reports``; and the table's checks refuse what cannot be."""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain.rules import Rules
from gpux_billing.service import settlement
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseFailureReported, LeaseReadyReported
from gpux_contracts.topics import BILLING_COMMANDS, MARKET_TRADES, ORDERS_COMMANDS
from gpux_devinfra.testing.payloads import credit_requested, order_placed, trade_executed
from gpux_platform.clock import ManualClock

from .billing_round_trips import NOW, apply, event, units

pytestmark = pytest.mark.integration

DEADLINE = NOW + timedelta(seconds=600)

R = TypeVar("R", LeaseReadyReported, LeaseFailureReported)


class Lease:
    """A funded order of a fresh buyer, and the trade of its lease (600 s to provision)."""

    def __init__(self, pool: asyncpg.Pool, clock: ManualClock) -> None:
        tag = new_id()[-8:].lower()
        self.pool = pool
        self.real = units(pool, Rules(), clock)
        self.buyer, self.id = f"{tag}-b", f"{tag}-L"
        self.order = order_placed(order_id=f"{tag}-o", buyer_id=self.buyer, gpus=2, price="2.00")
        self.trade = trade_executed(
            trade_id=self.id,
            order_id=self.order.order_id,
            buyer_id=self.buyer,
            gpus=2,
            price="1.80",  # 3.60 an hour for both GPUs
            executed_at=NOW,
            provisioning_timeout_seconds=600,
        )

    @classmethod
    async def funded(cls, pool: asyncpg.Pool, clock: ManualClock) -> Lease:
        """A lease whose order is funded, its trade not applied yet."""
        lease = cls(pool, clock)
        await lease.fund()
        return lease

    async def fund(self) -> None:
        await apply(self.real, BILLING_COMMANDS, [event(credit_requested(self.buyer, "100"))])
        await apply(self.real, ORDERS_COMMANDS, [event(self.order)])

    async def open(self) -> None:
        await apply(self.real, MARKET_TRADES, [event(self.trade)])

    def ready(self, seconds: float) -> Envelope[LeaseReadyReported]:
        return self._reported(LeaseReadyReported, seconds)

    def failure(self, seconds: float) -> Envelope[LeaseFailureReported]:
        return self._reported(LeaseFailureReported, seconds, detail="fan")

    def _reported(self, report: type[R], seconds: float, **fields: str) -> Envelope[R]:
        """The seller's report of this lease made ``seconds`` after ``NOW``, from the gateway."""
        at = NOW + timedelta(seconds=seconds)
        payload = report(
            lease_id=self.id, buyer_id=self.buyer, seller_id="s1", reported_at=at, **fields
        )
        return wrap(payload, producer="gateway", occurred_at=at)

    async def row(self) -> asyncpg.Record:
        found = await self.pool.fetchrow("SELECT * FROM billing.leases WHERE id = $1", self.id)
        assert found is not None
        return found

    async def outbox(self, event_type: str, topic: str = "billing.leases") -> int:
        return int(
            await self.pool.fetchval(
                "SELECT count(*) FROM billing.outbox WHERE topic = $1"
                " AND position($2 IN convert_from(body, 'UTF8')) > 0"
                " AND position($3 IN convert_from(body, 'UTF8')) > 0",
                topic,
                event_type,
                self.id,
            )
        )

    async def funds(self) -> tuple[int, int]:
        async with self.pool.acquire() as conn:
            found = await PostgresLedger(conn).wallet_balances([(self.buyer, self.trade.currency)])
        return found[(self.buyer, self.trade.currency)]


async def test_a_provisioning_lease_is_stored_then_made_ready_and_charged_from_ready_at(
    billing_pool: asyncpg.Pool,
) -> None:
    clock = ManualClock(NOW + timedelta(seconds=5))
    lease = await Lease.funded(billing_pool, clock)
    await lease.open()
    row = await lease.row()
    # Billing opened the lease 5 s after its start: the seller's time counts from then.
    deadline = DEADLINE + timedelta(seconds=5)
    assert (row["provisioning_deadline"], row["ready_at"], row["next_due_at"]) == (
        deadline,
        None,
        deadline,
    )
    assert (row["period"], row["charged_micros"], row["held_micros"]) == (0, 0, 4_000_000)
    clock.advance(timedelta(seconds=85))
    report = lease.ready(90)
    await apply(lease.real, BILLING_COMMANDS, [report])
    await apply(lease.real, BILLING_COMMANDS, [report, lease.ready(95)])  # nothing more
    row = await lease.row()
    ready_at = NOW + timedelta(seconds=90)
    assert (row["started_at"], row["ready_at"]) == (NOW, ready_at)
    assert (row["period"], row["charged_micros"], row["held_micros"]) == (1, 3_600_000, 400_000)
    assert row["next_due_at"] == ready_at + timedelta(hours=1)
    assert await lease.outbox("lease.ready") == 1
    assert await lease.funds() == (96_000_000, 400_000)


async def test_the_settlement_loop_fails_a_lease_at_its_deadline_and_releases_it(
    billing_pool: asyncpg.Pool,
) -> None:
    clock = ManualClock(NOW)
    lease = await Lease.funded(billing_pool, clock)
    await lease.open()
    clock.advance(timedelta(seconds=600))
    async with lease.real() as uow:
        await settlement.settle_due(uow, 1000)
        await uow.commit()
    row = await lease.row()
    assert (row["end_reason"], row["failure"], row["ended_at"]) == (
        "failed",
        "provisioning_timeout",
        DEADLINE,
    )
    assert (row["ready_at"], row["next_due_at"], row["held_micros"]) == (None, None, 0)
    assert await lease.funds() == (100_000_000, 0)
    assert await lease.outbox("lease.released", "capacity.commands") == 1
    await apply(lease.real, BILLING_COMMANDS, [lease.ready(10)])  # too late: nothing changes
    assert await lease.outbox("lease.ready") == 0
    async with billing_pool.acquire() as conn:
        assert (await PostgresLedger(conn).verify()).ok


async def test_a_failure_report_before_its_trade_waits_and_fails_the_lease_as_it_opens(
    billing_pool: asyncpg.Pool,
) -> None:
    clock = ManualClock(NOW + timedelta(seconds=20))
    lease = await Lease.funded(billing_pool, clock)
    assert (await apply(lease.real, BILLING_COMMANDS, [lease.failure(15)])).applied == 1
    kept = await billing_pool.fetchrow(
        "SELECT * FROM billing.pending_lease_reports WHERE lease_id = $1", lease.id
    )
    assert kept is not None
    assert (kept["kind"], kept["detail"], kept["buyer_id"]) == ("failed", "fan", lease.buyer)
    await lease.open()
    row = await lease.row()
    assert (row["end_reason"], row["failure"], row["failure_detail"]) == (
        "failed",
        "seller_reported",
        "fan",
    )
    assert row["ended_at"] == NOW + timedelta(seconds=15)
    pending = "SELECT count(*) FROM billing.pending_lease_reports WHERE lease_id = $1"
    assert await billing_pool.fetchval(pending, lease.id) == 0
    assert await lease.funds() == (100_000_000, 0)


@pytest.mark.parametrize(
    "change",
    [
        "ready_at = NULL",  # neither ready nor provisioning
        "end_reason = 'failed', ended_at = started_at, next_due_at = NULL",  # failed when ready
        "failure = 'seller_reported'",  # a failure without failing
    ],
)
async def test_the_leases_table_refuses_a_lifecycle_that_cannot_be(
    billing_pool: asyncpg.Pool, change: str
) -> None:
    clock = ManualClock(NOW)
    lease = await Lease.funded(billing_pool, clock)
    lease.trade = lease.trade.model_copy(update={"provisioning_timeout_seconds": 0})
    await lease.open()
    assert (await lease.row())["ready_at"] == NOW  # ready at its start
    with pytest.raises(asyncpg.CheckViolationError):
        await billing_pool.execute(f"UPDATE billing.leases SET {change} WHERE id = $1", lease.id)
