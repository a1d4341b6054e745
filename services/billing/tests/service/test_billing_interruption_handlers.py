"""Interruptions, later starts and releases on the memory unit of work: the book's
``lease.interruption_requested`` gives one ``lease.interruption_notice``; the settlement loop
ends the lease at ``interrupt_at`` with ``interrupted``; a trade's ``starts_at`` starts its
lease then; and every lease that ends gives its GPUs back (``lease.released``) in the unit
that ends it."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from prometheus_client import REGISTRY

from gpux_billing.domain.leases import Policy
from gpux_billing.domain.rules import Rules
from gpux_billing.service import settlement
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import accrued_micros
from gpux_contracts.offers import Tier
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
    ORDERS_COMMANDS,
)
from gpux_devinfra.testing.payloads import GPU, interruption_requested, order_placed, trade_executed

from .billing_desk import Desk

pytestmark = pytest.mark.unit

NOTICE = timedelta(seconds=120)


async def leased(
    desk: Desk,
    lease_id: str,
    *,
    tier: Tier = Tier.INTERRUPTIBLE,
    billing: str = "second",
    price: str = "1.80",  # 2 GPUs: 3.60 an hour, 1,000 micros a second
    starts_at: datetime | None = None,
    hours: int | None = None,
    executed_at: datetime | None = None,
) -> TradeExecuted:
    """A funded order of b1 for 2 GPUs and its trade (executed now unless ``executed_at``),
    opened as a lease."""
    await desk.credit("b1", "100")
    order = order_placed(order_id=f"o-{lease_id}", gpus=2, price="2.00", hours=hours)
    await desk.run(ORDERS_COMMANDS, order)  # holds 4.00
    executed = trade_executed(
        trade_id=lease_id,
        order_id=order.order_id,
        offer_id=f"offer-{lease_id}",
        gpus=2,
        price=price,
        billing=billing,
        tier=tier.value,
        hours=hours,
        executed_at=executed_at or desk.clock.now(),
        starts_at=starts_at,
    )
    await desk.run(MARKET_TRADES, executed)
    return executed


def interruption(
    desk: Desk, lease_id: str, notice: timedelta = NOTICE, buyer: str = "b1"
) -> Envelope[Any]:
    """The book's interruption of a lease, decided now, as the book publishes it."""
    now = desk.clock.now()
    request = interruption_requested(
        lease_id,
        noticed_at=now,
        notice=notice,
        buyer_id=buyer,
        offer_id=f"offer-{lease_id}",
        cause=InterruptionCause.PREEMPTED,
        taken_by=["od-1"],
    )
    return wrap(request, producer="matching", occurred_at=now)


def stop(desk: Desk, lease_id: str) -> LeaseStopRequested:
    return LeaseStopRequested(lease_id=lease_id, buyer_id="b1", requested_at=desk.clock.now())


async def tick(desk: Desk) -> settlement.Tick:
    async with desk.uow:
        done = await settlement.settle_due(desk.uow, 100)
        await desk.uow.commit()
    return done


def released(desk: Desk, since: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The ``lease.released`` committed after the first ``since`` events: (key, payload)."""
    return [
        (m.key, m.envelope.payload.model_dump(mode="json"))
        for m in desk.uow.published[since:]
        if m.topic is CAPACITY_COMMANDS
    ]


def late() -> float:
    """How many late interruptions billing counted (``gpux_billing_late_interruptions_total``)."""
    return REGISTRY.get_sample_value("gpux_billing_late_interruptions_total") or 0.0


def iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def assert_released_with_its_end(desk: Desk, since: int) -> dict[str, Any]:
    """The events since ``since`` (one unit's) end one lease and release it, alike."""
    (ended,) = [
        m.envelope.payload.model_dump(mode="json")
        for m in desk.uow.published[since:]
        if m.envelope.event_type == "lease.ended"
    ]
    ((key, release),) = released(desk, since)
    assert key == GPU
    assert (release["lease_id"], release["reason"], release["ended_at"]) == (
        ended["lease_id"],
        ended["reason"],
        ended["ended_at"],
    )
    return release


# The notice ---------------------------------------------------------------------------------


async def test_an_interruption_is_noticed_once_and_makes_the_lease_due_at_interrupt_at(
    desk: Desk,
) -> None:
    executed = await leased(desk, "L1")
    desk.clock.advance(timedelta(seconds=30))
    request = interruption(desk, "L1", timedelta(seconds=150.5))
    again = interruption(desk, "L1", timedelta(seconds=400))  # another decision: ignored
    await desk.run(BILLING_COMMANDS, request, request)
    await desk.run(BILLING_COMMANDS, again)
    (notice,) = desk.published("lease.interruption_notice")
    assert notice == {
        "lease_id": "L1",
        "buyer_id": "b1",
        "seller_id": "s1",
        "offer_id": executed.offer_id,
        "cause": "preempted",
        "noticed_at": iso(desk.clock.now()),
        "interrupt_at": iso(desk.clock.now() + timedelta(seconds=150.5)),
        "notice_seconds": 150,
    }
    (message,) = [m for m in desk.uow.published if m.envelope.event_type.endswith("_notice")]
    assert (message.topic.name, message.key) == ("billing.leases", "L1")
    lease = await desk.uow.leases.get("L1")
    assert lease is not None
    assert lease.state.interruption is not None
    assert lease.state.interruption.at == desk.clock.now() + timedelta(seconds=150.5)
    assert desk.uow.leases.next_due_at("L1") == executed.executed_at + timedelta(seconds=60)
    assert released(desk) == []


async def test_the_loop_ends_the_lease_at_interrupt_at_charged_exactly_and_released(
    desk: Desk,
) -> None:
    executed = await leased(desk, "L1")
    desk.clock.advance(timedelta(seconds=130))
    await tick(desk)  # two minutes charged
    await desk.run(BILLING_COMMANDS, interruption(desk, "L1", timedelta(seconds=20.25)))
    interrupt_at = executed.executed_at + timedelta(seconds=150.25)
    assert desk.uow.leases.next_due_at("L1") == interrupt_at
    desk.clock.advance(timedelta(seconds=19))
    assert await tick(desk) == settlement.Tick(looked_at=0)  # not yet
    desk.clock.advance(timedelta(seconds=2))
    since = len(desk.uow.published)
    assert await tick(desk) == settlement.Tick(looked_at=1)
    release = assert_released_with_its_end(desk, since)
    assert release == {
        "lease_id": "L1",
        "offer_id": executed.offer_id,
        "gpu": GPU,
        "gpus": 2,
        "tier": "interruptible",
        "reason": "interrupted",
        "ended_at": iso(interrupt_at),
    }
    (ended,) = desk.published("lease.ended")
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("0.15")  # 150 s at 0.001
    assert accrued_micros(3_600_000, 150) == 150_000
    assert await desk.funds("b1") == (100_000_000 - 150_000, 0)  # the rest of the hold back
    assert desk.uow.leases.next_due_at("L1") is None
    assert (await desk.uow.ledger.verify()).ok


async def test_a_stop_before_interrupt_at_is_an_ordinary_stop(desk: Desk) -> None:
    await leased(desk, "L1")
    await desk.run(BILLING_COMMANDS, interruption(desk, "L1"))
    desk.clock.advance(timedelta(seconds=45))
    since = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, stop(desk, "L1"))
    assert assert_released_with_its_end(desk, since)["reason"] == "stopped"
    (ended,) = desk.published("lease.ended")
    assert ended["reason"] == "stopped"
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("0.045")
    desk.clock.advance(NOTICE)
    await tick(desk)
    assert len(desk.published("lease.ended")) == 1
    assert len(released(desk)) == 1


async def test_an_ended_lease_ignores_its_interruption(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    await leased(desk, "L1")
    await desk.run(BILLING_COMMANDS, stop(desk, "L1"))
    with caplog.at_level(logging.INFO, "gpux.billing.interruptions"):
        outcome = await desk.run(BILLING_COMMANDS, interruption(desk, "L1"))
    assert outcome.applied == 1
    assert desk.published("lease.interruption_notice") == []
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "interruption ignored: ended")
    ]


async def test_an_on_demand_lease_is_never_interrupted(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    await leased(desk, "L1", tier=Tier.ON_DEMAND)
    with caplog.at_level(logging.INFO, "gpux.billing.interruptions"):
        await desk.run(BILLING_COMMANDS, interruption(desk, "L1"))
        await desk.run(BILLING_COMMANDS, interruption(desk, "L1", buyer="b2"))
    assert desk.published("lease.interruption_notice") == []
    lease = await desk.uow.leases.get("L1")
    assert lease is not None
    assert lease.state.interruption is None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "interruption ignored: on_demand"),
        (logging.WARNING, "interruption ignored: not_the_buyers"),
    ]


async def test_an_interruption_before_its_trade_is_kept_and_taken_when_the_trade_opens_it(
    desk: Desk,
) -> None:
    executed_at = desk.clock.now()
    desk.clock.advance(timedelta(seconds=10))
    request = interruption(desk, "L1")  # interrupt_at: 130 s after the trade
    interrupt_at = executed_at + timedelta(seconds=130)
    assert (await desk.run(BILLING_COMMANDS, request)).applied == 1  # acknowledged at once
    assert request.event_id in desk.uow.inbox
    assert desk.published("lease.interruption_notice") == []
    desk.clock.advance(timedelta(seconds=30))  # market.trades lagged 40 s
    executed = await leased(desk, "L1", executed_at=executed_at)
    (notice,) = desk.published("lease.interruption_notice")
    assert (notice["interrupt_at"], notice["notice_seconds"]) == (iso(interrupt_at), 120)
    types = [m.envelope.event_type for m in desk.uow.published if m.key == "L1"]
    assert types[:2] == ["lease.opened", "lease.interruption_notice"]
    assert desk.uow.leases.next_due_at("L1") == executed_at + timedelta(seconds=60)
    again = interruption(desk, "L1", timedelta(seconds=400))  # another decision: ignored
    await desk.run(BILLING_COMMANDS, request, again)
    await desk.run(MARKET_TRADES, executed)
    for _ in range(3):
        desk.clock.advance(timedelta(seconds=60))
        await tick(desk)
    assert len(desk.published("lease.interruption_notice")) == 1
    (ended,) = desk.published("lease.ended")
    assert (ended["reason"], ended["ended_at"]) == ("interrupted", iso(interrupt_at))
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("0.13")  # 130 s at 0.001
    ((_, release),) = released(desk)
    assert (release["reason"], release["ended_at"]) == ("interrupted", iso(interrupt_at))
    assert await desk.funds("b1") == (100_000_000 - 130_000, 0)
    assert desk.uow.state.pending_interruptions == {}
    assert (await desk.uow.ledger.verify()).ok


async def test_a_lease_whose_interrupt_at_passed_before_its_trade_ends_there_as_it_opens(
    desk: Desk,
) -> None:
    executed_at = desk.clock.now()
    desk.clock.advance(timedelta(seconds=10))
    request = interruption(desk, "L1", timedelta(seconds=120.5))
    interrupt_at = executed_at + timedelta(seconds=130.5)
    await desk.run(BILLING_COMMANDS, request)
    desk.clock.advance(timedelta(seconds=300))  # the trade comes long after interrupt_at
    since = len(desk.uow.published)
    executed = await leased(desk, "L1", executed_at=executed_at)
    release = assert_released_with_its_end(desk, since)  # in the unit that opened it
    assert (release["reason"], release["ended_at"]) == ("interrupted", iso(interrupt_at))
    types = [m.envelope.event_type for m in desk.uow.published[since:] if m.key == "L1"]
    assert types[:2] == ["lease.opened", "lease.interruption_notice"]
    assert types[-1] == "lease.ended"
    (ended,) = desk.published("lease.ended")
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("0.13")  # 130 whole seconds
    assert [c["period_end"] for c in desk.charged()][-1] == iso(interrupt_at)
    assert await desk.funds("b1") == (100_000_000 - 130_000, 0)
    published = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, request)
    await desk.run(MARKET_TRADES, executed)
    desk.clock.advance(timedelta(hours=1))
    await tick(desk)
    assert len(desk.uow.published) == published  # replays change nothing more
    assert desk.uow.leases.next_due_at("L1") is None
    assert (await desk.uow.ledger.verify()).ok


async def test_a_kept_interruption_of_an_on_demand_lease_is_ignored_when_it_opens(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    await desk.run(BILLING_COMMANDS, interruption(desk, "L1"))
    with caplog.at_level(logging.INFO, "gpux.billing.interruptions"):
        await leased(desk, "L1", tier=Tier.ON_DEMAND)
    assert desk.published("lease.interruption_notice") == []
    lease = await desk.uow.leases.get("L1")
    assert lease is not None
    assert lease.state.interruption is None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "interruption ignored: on_demand")
    ]


async def test_a_late_interruption_is_counted_and_ends_at_the_last_settled_instant(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    executed = await leased(desk, "L1")
    desk.clock.advance(timedelta(seconds=300))
    await tick(desk)  # charged through 300 s
    request = LeaseInterruptionRequested(
        **interruption(desk, "L1").payload.model_dump(exclude={"noticed_at", "interrupt_at"}),
        noticed_at=executed.executed_at,
        interrupt_at=executed.executed_at + NOTICE,  # decided 300 s ago: billing.commands lagged
    )
    before = late()
    with caplog.at_level(logging.WARNING, "gpux.billing.interruptions"):
        await desk.run(BILLING_COMMANDS, request)
    assert late() == before + 1
    assert [r.getMessage() for r in caplog.records] == [
        "interruption after its lease was charged past interrupt_at: it ends at its last"
        " settled instant"
    ]
    await tick(desk)
    (ended,) = desk.published("lease.ended")
    assert ended["reason"] == "interrupted"
    assert ended["ended_at"] == iso(executed.executed_at + timedelta(seconds=300))


# Later starts -----------------------------------------------------------------------------


async def assert_first_charge(
    desk: Desk, wait: timedelta, amount: str, period_start: datetime
) -> None:
    """Nothing is charged when ``wait`` has passed; a second later, the first charge:
    ``amount`` for the period from ``period_start``."""
    desk.clock.advance(wait)
    await tick(desk)
    assert desk.charged() == []
    desk.clock.advance(timedelta(seconds=1))
    await tick(desk)
    (first,) = desk.charged()
    assert (Decimal(first["amount"]), first["period_start"]) == (Decimal(amount), iso(period_start))


async def test_an_hourly_lease_starting_later_pays_nothing_before_its_start(desk: Desk) -> None:
    starts_at = desk.clock.now() + NOTICE
    await leased(desk, "L1", tier=Tier.ON_DEMAND, billing="hour", starts_at=starts_at, hours=2)
    (opened,) = desk.published("lease.opened")
    assert (opened["started_at"], opened["ends_at"]) == (
        iso(starts_at),
        iso(starts_at + timedelta(hours=2)),
    )
    assert desk.charged() == []
    assert await desk.funds("b1") == (96_000_000, 4_000_000)  # still the order's hold
    assert desk.uow.leases.next_due_at("L1") == starts_at
    await assert_first_charge(desk, NOTICE - timedelta(seconds=1), "3.6", starts_at)
    assert await desk.funds("b1") == (96_000_000, 400_000)


@pytest.mark.parametrize("billing", ["hour", "second"])
async def test_a_lease_stopped_before_its_start_costs_nothing(desk: Desk, billing: str) -> None:
    starts_at = desk.clock.now() + NOTICE
    await leased(desk, "L1", tier=Tier.ON_DEMAND, billing=billing, starts_at=starts_at)
    desk.clock.advance(timedelta(seconds=30))
    since = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, stop(desk, "L1"))
    release = assert_released_with_its_end(desk, since)
    assert (release["reason"], release["tier"]) == ("stopped", "on_demand")
    (ended,) = desk.published("lease.ended")
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert ended["ended_at"] == iso(starts_at)  # a lease never ends before its start
    assert desk.charged() == []
    assert await desk.funds("b1") == (100_000_000, 0)  # the whole hold released
    desk.clock.advance(timedelta(hours=1))
    await tick(desk)
    assert desk.charged() == []


async def test_a_per_second_lease_starting_later_counts_from_its_start(desk: Desk) -> None:
    starts_at = desk.clock.now() + NOTICE
    await leased(desk, "L1", tier=Tier.ON_DEMAND, starts_at=starts_at)
    await assert_first_charge(desk, NOTICE + timedelta(seconds=59), "0.06", starts_at)


# Every end releases -------------------------------------------------------------------------


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "per_lease"])
async def test_every_end_gives_the_gpus_back_in_the_unit_that_ends_the_lease(
    batched: bool,
) -> None:
    desk = Desk(Rules(lease=Policy(batched_events=batched), dev_topups=True))
    await leased(desk, "stopped", tier=Tier.ON_DEMAND)
    await leased(desk, "completed", tier=Tier.ON_DEMAND, billing="hour", hours=1)
    await leased(desk, "interrupted")
    # A lease whose buyer cannot pay: 0.10 lasts 3 minutes at 1.80 an hour, 1 GPU.
    await desk.credit("b2", "0.10")
    await desk.run(ORDERS_COMMANDS, order_placed(order_id="o-poor", buyer_id="b2", price="0.01"))
    poor = trade_executed(
        trade_id="insufficient_funds",
        order_id="o-poor",
        buyer_id="b2",
        price="1.80",
        billing="second",
        executed_at=desk.clock.now(),
    )
    await desk.run(MARKET_TRADES, poor)
    await desk.run(BILLING_COMMANDS, interruption(desk, "interrupted"))
    desk.clock.advance(timedelta(seconds=30))
    since = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, stop(desk, "stopped"))
    assert_released_with_its_end(desk, since)
    for _ in range(70):  # past the notice, the poor buyer's money, and the hour
        desk.clock.advance(timedelta(seconds=60))
        since = len(desk.uow.published)
        await tick(desk)
        ends = [m.key for m in desk.uow.published[since:] if m.envelope.event_type == "lease.ended"]
        assert sorted(r["lease_id"] for _, r in released(desk, since)) == sorted(ends)
    by_lease = {r["lease_id"]: (key, r["reason"]) for key, r in released(desk)}
    assert by_lease == {
        reason: (GPU, reason)
        for reason in ("stopped", "completed", "interrupted", "insufficient_funds")
    }
    ended = {e["lease_id"]: e for e in desk.published("lease.ended")}
    for _, release in released(desk):
        assert release["ended_at"] == ended[release["lease_id"]]["ended_at"]
    kinds = {m.envelope.event_type for m in desk.uow.published}
    assert ("leases.settled" in kinds) is batched
