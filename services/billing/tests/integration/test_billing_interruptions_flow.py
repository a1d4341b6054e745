"""Interruptions on the real stack, inside billing: the book's interruption in, the notice,
the end at ``interrupt_at`` and the release out, the preempting trade starting then.

Billing runs in-process with a clock 30 times faster than the wall clock (a 120 s notice
passes in 4 s). Credits and orders are published as the gateway would, trades and
interruptions as the book would; results are read back from Kafka (``billing.leases``,
``capacity.commands``), the ledger and the leases' rows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain.leases import whole_seconds
from gpux_billing.domain.ledger import AccountKind
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency, accrued_micros, from_micros
from gpux_contracts.offers import Tier
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    BILLING_LEASES,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
)
from gpux_devinfra.testing.kafka import Published, publish, published
from gpux_devinfra.testing.payloads import GPU, trade_executed
from gpux_platform.settings import GpuxSettings

from .lease_feed import balance, fast_billing, funded_order, lease_events, of_type, send

SPEED = 30
NOTICE = timedelta(seconds=300.5)  # 10 s of the wall clock: billing hears of it well before


@pytest.fixture(scope="module")
async def billing(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    async with fast_billing(module_settings, SPEED) as settings:
        yield settings


async def lease_of(settings: GpuxSettings, tier: Tier, billing: str, **terms: Any) -> TradeExecuted:
    """A new buyer's funded order and the book's trade of it, for 2 GPUs at 1.80 (3.60 an
    hour, 0.001 a second), opened as a lease."""
    buyer = f"b{new_id()}"
    order_id = await funded_order(settings, buyer)
    executed = trade_executed(
        order_id=order_id,
        offer_id=f"offer-{new_id()}",
        buyer_id=buyer,
        seller_id=f"s{new_id()}",
        gpus=2,
        price="1.80",
        billing=billing,
        tier=tier.value,
        executed_at=settings.clock().now(),
        **terms,
    )
    await send(settings, MARKET_TRADES, GPU, executed, "matching")
    await lease_events(settings, executed.trade_id, "lease.opened")
    return executed


async def releases(settings: GpuxSettings, lease_id: str) -> list[Published]:
    """The ``lease.released`` of a lease on ``capacity.commands`` (waits for one)."""
    return await published(
        settings, CAPACITY_COMMANDS, lambda b: b["payload"]["lease_id"] == lease_id, 0.5, 20
    )


async def charges(settings: GpuxSettings, lease_id: str) -> list[dict[str, Any]]:
    """The lease's charges in either form: a ``lease.charged``, or its item of the settlement
    loop's ``leases.settled`` (waits for one)."""

    def items(body: dict[str, Any]) -> list[dict[str, Any]]:
        payload = body["payload"]
        if body["event_type"] == "leases.settled":
            return [i for i in payload["leases"] if i["lease_id"] == lease_id]
        ours = body["event_type"] == "lease.charged" and payload["lease_id"] == lease_id
        return [payload] if ours else []

    found = await published(settings, BILLING_LEASES, lambda b: bool(items(b)), 0.5, 30)
    return [i for f in found for i in items(f.body)]


def interruption(
    settings: GpuxSettings, lease: TradeExecuted, taken_by: list[str]
) -> LeaseInterruptionRequested:
    now = settings.clock().now()
    return LeaseInterruptionRequested(
        lease_id=lease.trade_id,
        buyer_id=lease.buyer_id,
        offer_id=lease.offer_id,
        seller_id=lease.seller_id,
        gpu=GPU,
        gpus=lease.gpus,
        cause=InterruptionCause.PREEMPTED,
        noticed_at=now,
        interrupt_at=now + NOTICE,
        taken_by=taken_by,
    )


async def test_an_interrupted_lease_ends_at_interrupt_at_and_its_gpus_go_to_the_preemptor(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    spot = await lease_of(billing, Tier.INTERRUPTIBLE, "second")
    # The book preempts it for an on-demand trade that takes its GPUs from interrupt_at.
    request = interruption(billing, spot, taken_by=[f"t{new_id()}"])
    interrupt_at = request.interrupt_at
    envelope = await send(billing, BILLING_COMMANDS, spot.buyer_id, request, "matching")
    await publish(billing, BILLING_COMMANDS, [(spot.buyer_id, envelope)])  # a replay
    later = request.model_copy(update={"interrupt_at": interrupt_at + NOTICE})
    await send(billing, BILLING_COMMANDS, spot.buyer_id, later, "matching")  # ignored
    preemptor = await lease_of(
        billing, Tier.ON_DEMAND, "hour", trade_id=request.taken_by[0], starts_at=interrupt_at
    )

    events = await lease_events(billing, spot.trade_id, "lease.interruption_notice")
    (notice,) = of_type(events, "lease.interruption_notice")
    assert notice["notice_seconds"] == int(NOTICE.total_seconds())
    assert datetime.fromisoformat(notice["interrupt_at"]) == interrupt_at
    assert (notice["cause"], notice["offer_id"]) == ("preempted", spot.offer_id)

    events = await lease_events(billing, spot.trade_id, "lease.ended")
    (ended,) = of_type(events, "lease.ended")
    assert len(of_type(events, "lease.interruption_notice")) == 1
    assert ended["reason"] == "interrupted"
    assert datetime.fromisoformat(ended["ended_at"]) == interrupt_at
    charged = accrued_micros(3_600_000, whole_seconds(spot.executed_at, interrupt_at))
    assert Decimal(ended["totals"]["total_charged"]) == from_micros(charged)
    assert (
        await balance(pool, spot.buyer_id, Currency.USD, AccountKind.AVAILABLE)
        == 10_000_000 - charged
    )
    # The rest released.
    assert await balance(pool, spot.buyer_id, Currency.USD, AccountKind.HELD) == 0
    ((key, release),) = [(r.key, r.body["payload"]) for r in await releases(billing, spot.trade_id)]
    assert key == GPU
    assert release == {
        "lease_id": spot.trade_id,
        "offer_id": spot.offer_id,
        "gpu": GPU,
        "gpus": 2,
        "tier": "interruptible",
        "reason": "interrupted",
        "ended_at": ended["ended_at"],
    }

    await the_preemptor_started_at_interrupt_at(billing, pool, preemptor, interrupt_at)
    await the_lease_row_keeps_its_interruption(pool, request)


async def the_preemptor_started_at_interrupt_at(
    billing: GpuxSettings, pool: asyncpg.Pool, preemptor: TradeExecuted, interrupt_at: datetime
) -> None:
    """The preempting lease started at interrupt_at and paid its first hour then: charged by
    the loop at its start (or at its opening, had billing seen its trade only after it)."""
    (opened,) = of_type(
        await lease_events(billing, preemptor.trade_id, "lease.opened"), "lease.opened"
    )
    assert datetime.fromisoformat(opened["started_at"]) == interrupt_at
    (first,) = await charges(billing, preemptor.trade_id)
    assert datetime.fromisoformat(first["period_start"]) == interrupt_at
    assert Decimal(first["amount"]) == Decimal("3.6")
    assert await balance(pool, preemptor.buyer_id, Currency.USD, AccountKind.HELD) == 400_000


async def the_lease_row_keeps_its_interruption(
    pool: asyncpg.Pool, request: LeaseInterruptionRequested
) -> None:
    """The interrupted lease's row: ended interrupted, its interruption kept, nothing due; the
    ledger balanced."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT end_reason, interrupt_at, interruption_cause, interruption_noticed_at,"
            " next_due_at FROM billing.leases WHERE id = $1",
            request.lease_id,
        )
        assert row is not None
        assert (row["end_reason"], row["interruption_cause"]) == ("interrupted", "preempted")
        assert (row["interrupt_at"], row["interruption_noticed_at"]) == (
            request.interrupt_at,
            request.noticed_at,
        )
        assert row["next_due_at"] is None
        audit = await PostgresLedger(conn).verify()
    assert audit.ok, audit


async def test_a_lease_stopped_before_its_start_costs_nothing_and_is_released(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    starts_at = billing.clock().now() + timedelta(minutes=30)  # a minute of the wall clock
    scheduled = await lease_of(billing, Tier.ON_DEMAND, "hour", starts_at=starts_at)
    stop = LeaseStopRequested(
        lease_id=scheduled.trade_id,
        buyer_id=scheduled.buyer_id,
        requested_at=billing.clock().now(),
    )
    await send(billing, BILLING_COMMANDS, scheduled.buyer_id, stop, "gateway")
    events = await lease_events(billing, scheduled.trade_id, "lease.ended")
    (ended,) = of_type(events, "lease.ended")
    assert ended["reason"] == "stopped"
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert of_type(events, "lease.charged") == []
    assert (
        await balance(pool, scheduled.buyer_id, Currency.USD, AccountKind.AVAILABLE) == 10_000_000
    )
    assert await balance(pool, scheduled.buyer_id, Currency.USD, AccountKind.HELD) == 0
    ((key, release),) = [
        (r.key, r.body["payload"]) for r in await releases(billing, scheduled.trade_id)
    ]
    assert (key, release["reason"], release["tier"]) == (GPU, "stopped", "on_demand")


async def test_the_database_refuses_an_interrupted_end_without_an_interruption(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    lease = await lease_of(billing, Tier.INTERRUPTIBLE, "second")
    async with pool.acquire() as conn:
        with pytest.raises(asyncpg.CheckViolationError):
            await conn.execute(
                "UPDATE billing.leases SET ended_at = started_at, end_reason = 'interrupted',"
                " next_due_at = NULL WHERE id = $1",
                lease.trade_id,
            )
        with pytest.raises(asyncpg.CheckViolationError):
            await conn.execute(
                "UPDATE billing.leases SET interrupt_at = started_at WHERE id = $1",
                lease.trade_id,
            )
