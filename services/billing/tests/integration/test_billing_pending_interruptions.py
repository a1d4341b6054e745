"""An interruption that reaches billing before its trade, on PostgreSQL: kept in
``billing.pending_interruptions`` and acknowledged, then taken by the trade's batch, whose
lease opens with its ``interrupt_at`` (its notice once) or, when ``interrupt_at`` has passed,
ends there as it opens (``interrupted``, charged exactly to it, released)."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
import pytest

from gpux_billing.domain.rules import Rules
from gpux_contracts.capacity import LeaseInterruptionRequested
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.topics import BILLING_COMMANDS, MARKET_TRADES, ORDERS_COMMANDS
from gpux_devinfra.testing.payloads import (
    GPU,
    credit_requested,
    interruption_requested,
    order_placed,
    trade_executed,
)
from gpux_platform.clock import ManualClock

from .billing_round_trips import NOW, apply, event, units

pytestmark = pytest.mark.integration


def request(lease_id: str, buyer: str, notice_s: float) -> Envelope[LeaseInterruptionRequested]:
    """The book's interruption of ``lease_id``, decided 10 s after the trade at ``NOW``."""
    decided = NOW + timedelta(seconds=10)
    notice = timedelta(seconds=notice_s)
    payload = interruption_requested(lease_id, noticed_at=decided, notice=notice, buyer_id=buyer)
    return wrap(payload, producer="matching", occurred_at=decided)


async def notices(pool: asyncpg.Pool, lease_id: str) -> int:
    return int(
        await pool.fetchval(
            "SELECT count(*) FROM billing.outbox WHERE key = $1"
            " AND position('lease.interruption_notice' IN convert_from(body, 'UTF8')) > 0",
            lease_id,
        )
    )


@pytest.mark.parametrize("lag_s", [40, 300], ids=["before_interrupt_at", "after_interrupt_at"])
async def test_an_interruption_before_its_trade_is_taken_when_the_trade_opens_the_lease(
    billing_pool: asyncpg.Pool, lag_s: int
) -> None:
    tag = new_id()[-8:].lower()
    buyer, lease_id = f"{tag}-b", f"{tag}-L"
    clock = ManualClock(NOW + timedelta(seconds=10))
    real = units(billing_pool, Rules(), clock)
    await apply(real, BILLING_COMMANDS, [event(credit_requested(buyer, "100"))])
    order = order_placed(order_id=f"{tag}-o", buyer_id=buyer, gpus=2, price="2.00")
    await apply(real, ORDERS_COMMANDS, [event(order)])
    interruption = request(lease_id, buyer, 120.5)
    assert (await apply(real, BILLING_COMMANDS, [interruption])).applied == 1
    kept = await billing_pool.fetchrow(
        "SELECT * FROM billing.pending_interruptions WHERE lease_id = $1", lease_id
    )
    assert kept is not None
    assert (kept["buyer_id"], kept["cause"]) == (buyer, "reclaimed")
    clock.advance(timedelta(seconds=lag_s - 10))
    trade = trade_executed(
        trade_id=lease_id,
        order_id=order.order_id,
        buyer_id=buyer,
        offer_id="offer",
        gpus=2,
        price="1.80",  # 3.60 an hour for both GPUs: 1,000 micros a second
        billing="second",
        tier="interruptible",
        executed_at=NOW,
    )
    await apply(real, MARKET_TRADES, [event(trade)])
    await apply(real, MARKET_TRADES, [event(trade)])  # replayed under another id: nothing more
    await apply(real, BILLING_COMMANDS, [interruption])  # replayed: nothing more
    interrupt_at = NOW + timedelta(seconds=130.5)
    row = await billing_pool.fetchrow("SELECT * FROM billing.leases WHERE id = $1", lease_id)
    assert row is not None
    assert (row["interrupt_at"], row["interruption_cause"]) == (interrupt_at, "reclaimed")
    assert await notices(billing_pool, lease_id) == 1
    pending = "SELECT count(*) FROM billing.pending_interruptions WHERE lease_id = $1"
    assert await billing_pool.fetchval(pending, lease_id) == 0
    if lag_s < 130:
        assert (row["ended_at"], row["next_due_at"]) == (None, NOW + timedelta(seconds=60))
        return
    assert (row["ended_at"], row["end_reason"]) == (interrupt_at, "interrupted")
    assert (row["charged_micros"], row["held_micros"]) == (130_000, 0)  # 130 whole seconds
    released = await billing_pool.fetchval(
        "SELECT count(*) FROM billing.outbox WHERE topic = 'capacity.commands' AND key = $1"
        " AND position($2 IN convert_from(body, 'UTF8')) > 0",
        GPU,
        lease_id,
    )
    assert released == 1
