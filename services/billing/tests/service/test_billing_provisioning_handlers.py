"""The lease's delivery lifecycle on the memory unit of work: a trade with a provisioning
timeout opens its lease provisioning (nothing charged, its prepayment held); the seller's
``lease.ready_reported`` makes it ready and charged from ``ready_at``; a failure report, the
deadline, a stop or an interruption end it with nothing charged and everything released; a
report that overtook its trade is kept and applied when the trade opens the lease."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.service import locking, settlement
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.leases import LeaseFailureReported, LeaseReadyReported, LeaseStopRequested
from gpux_contracts.offers import Tier
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    CAPACITY_COMMANDS,
    MARKET_TRADES,
    ORDERS_COMMANDS,
)
from gpux_devinfra.testing.payloads import interruption_requested, order_placed, trade_executed

from .billing_desk import T0, Desk, batch_and_alone, envelope

pytestmark = pytest.mark.unit

TIMEOUT = timedelta(seconds=600)
FUNDS = 100_000_000
HOLD = 4_000_000  # an hour of 2 GPUs at the order's limit, 2.00
HOUR = 3_600_000  # an hour of 2 GPUs at the trade's price, 1.80: 1,000 micros a second


async def funded(desk: Desk, lease_id: str = "L1", hours: int | None = None) -> str:
    await desk.credit("b1", "100")
    order = order_placed(order_id=f"o-{lease_id}", gpus=2, price="2.00", hours=hours)
    await desk.run(ORDERS_COMMANDS, order)
    return order.order_id


def trade(
    lease_id: str = "L1",
    *,
    billing: str = "hour",
    timeout_s: int = 600,
    tier: Tier = Tier.ON_DEMAND,
    hours: int | None = None,
    executed_at: datetime = T0,
) -> TradeExecuted:
    return trade_executed(
        trade_id=lease_id,
        order_id=f"o-{lease_id}",
        offer_id=f"offer-{lease_id}",
        gpus=2,
        price="1.80",
        billing=billing,
        tier=tier.value,
        hours=hours,
        executed_at=executed_at,
        provisioning_timeout_seconds=timeout_s,
    )


async def leased(
    desk: Desk, lease_id: str = "L1", *, after: timedelta | None = None, **fields: Any
) -> TradeExecuted:
    """A funded order of b1 for 2 GPUs and its trade with a 600 s provisioning timeout; then
    ``after`` passes on the desk's clock, if given."""
    await funded(desk, lease_id, fields.get("hours"))
    executed = trade(lease_id, **fields)
    await desk.run(MARKET_TRADES, executed)
    if after is not None:
        desk.clock.advance(after)
    return executed


def ready(desk: Desk, lease_id: str = "L1", seller: str = "s1") -> Envelope[Any]:
    report = LeaseReadyReported(
        lease_id=lease_id, buyer_id="b1", seller_id=seller, reported_at=desk.clock.now()
    )
    return envelope(report, at=desk.clock.now())


def failure(desk: Desk, lease_id: str = "L1", detail: str = "PSU died") -> Envelope[Any]:
    report = LeaseFailureReported(
        lease_id=lease_id,
        buyer_id="b1",
        seller_id="s1",
        reported_at=desk.clock.now(),
        detail=detail,
    )
    return envelope(report, at=desk.clock.now())


async def tick(desk: Desk) -> settlement.Tick:
    async with desk.uow:
        done = await settlement.settle_due(desk.uow, 100)
        await desk.uow.commit()
    return done


def iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def types(desk: Desk, since: int = 0, topic: str = "billing.leases") -> list[str]:
    return [m.envelope.event_type for m in desk.uow.published[since:] if m.topic.name == topic]


def released(desk: Desk) -> list[dict[str, Any]]:
    return [
        m.envelope.payload.model_dump(mode="json")
        for m in desk.uow.published
        if m.topic is CAPACITY_COMMANDS
    ]


async def assert_failed(desk: Desk, failure: str, ended_at: datetime, detail: str = "") -> None:
    """The lease L1 ended failed with zero totals, its prepayment back, its GPUs released."""
    (ended,) = desk.published("lease.ended")
    assert (ended["reason"], ended["failure"], ended["detail"]) == ("failed", failure, detail)
    assert ended["ended_at"] == iso(ended_at)
    assert ended["totals"]["period"] == 0
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert await desk.funds("b1") == (FUNDS, 0)
    (release,) = released(desk)
    assert (release["lease_id"], release["reason"]) == ("L1", "failed")
    posted = desk.published("ledger.posted")
    posted += [t for b in desk.published("ledger.batch_posted") for t in b["transfers"]]
    (line,) = [p for p in posted if p["transfer_id"] == "release:lease:L1"]
    assert {(x["kind"], Decimal(x["amount"])) for x in line["lines"]} == {
        ("held", Decimal(-4)),
        ("available", Decimal(4)),
    }
    assert desk.charged() == []
    assert desk.uow.leases.next_due_at("L1") is None
    assert (await desk.uow.ledger.verify()).ok


# Opening ------------------------------------------------------------------------------------


async def test_a_trade_with_a_timeout_opens_the_lease_provisioning_and_charges_nothing(
    desk: Desk,
) -> None:
    await leased(desk)
    (opened,) = desk.published("lease.opened")
    assert opened["provisioning_deadline"] == iso(T0 + TIMEOUT)
    assert opened["started_at"] == iso(T0)
    assert desk.charged() == []
    assert await desk.funds("b1") == (FUNDS - HOLD, HOLD)  # the prepayment stays held
    assert desk.uow.leases.next_due_at("L1") == T0 + TIMEOUT
    desk.clock.advance(TIMEOUT - timedelta(seconds=1))
    assert await tick(desk) == settlement.Tick(looked_at=0)


async def test_a_trade_without_a_timeout_opens_running_and_pays_its_first_hour(
    desk: Desk,
) -> None:
    await leased(desk, timeout_s=0)
    (opened,) = desk.published("lease.opened")
    assert opened["provisioning_deadline"] is None
    (charge,) = desk.charged()
    assert Decimal(charge["amount"]) == Decimal("3.6")
    assert desk.published("lease.ready") == []


async def test_a_lagging_billing_gives_the_seller_the_whole_timeout_from_the_opening(
    desk: Desk,
) -> None:
    """Billing reads the trade 61 s late (a restart, a rebalance): the seller hears of the
    lease only now, so its 60 s count from now, not from the trade."""
    await funded(desk)
    desk.clock.advance(timedelta(seconds=61))
    await desk.run(MARKET_TRADES, trade(timeout_s=60))
    (opened,) = desk.published("lease.opened")
    assert opened["provisioning_deadline"] == iso(T0 + timedelta(seconds=121))
    assert desk.published("lease.ended") == []
    assert await tick(desk) == settlement.Tick(looked_at=0)


# Ready ----------------------------------------------------------------------------------------


async def test_a_ready_report_announces_lease_ready_once_and_charges_the_first_hour_then(
    desk: Desk,
) -> None:
    await leased(desk, after=timedelta(seconds=200))
    report = ready(desk)
    since = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, report, report)
    await desk.run(BILLING_COMMANDS, ready(desk))  # another report: not provisioning any more
    ready_at = T0 + timedelta(seconds=200)
    (announced,) = desk.published("lease.ready")
    assert announced == {
        "lease_id": "L1",
        "buyer_id": "b1",
        "seller_id": "s1",
        "ready_at": iso(ready_at),
        "ends_at": None,
    }
    assert types(desk, since) == ["lease.ready", "lease.charged"]
    (charge,) = desk.charged()
    assert (charge["period_start"], Decimal(charge["amount"])) == (iso(ready_at), Decimal("3.6"))
    assert await desk.funds("b1") == (FUNDS - HOLD, HOLD - HOUR)
    assert desk.uow.leases.next_due_at("L1") == ready_at + timedelta(hours=1)
    desk.clock.advance(TIMEOUT)  # the deadline no longer applies
    await tick(desk)
    assert desk.published("lease.ended") == []


async def test_a_per_second_lease_is_charged_from_ready_at_to_its_stop(desk: Desk) -> None:
    await leased(desk, billing="second", after=timedelta(seconds=100))
    await desk.run(BILLING_COMMANDS, ready(desk))
    assert desk.charged() == []
    desk.clock.advance(timedelta(seconds=90.5))
    await tick(desk)
    stop = LeaseStopRequested(lease_id="L1", buyer_id="b1", requested_at=desk.clock.now())
    await desk.run(BILLING_COMMANDS, stop)
    (ended,) = desk.published("lease.ended")
    assert ended["reason"] == "stopped"
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("0.09")  # 90 s at 0.001
    assert await desk.funds("b1") == (FUNDS - 90_000, 0)
    assert (await desk.uow.ledger.verify()).ok


async def test_a_fixed_length_lease_ends_its_hours_after_ready_at(desk: Desk) -> None:
    await leased(desk, billing="second", hours=1, after=timedelta(seconds=300))
    await desk.run(BILLING_COMMANDS, ready(desk))
    (announced,) = desk.published("lease.ready")
    assert announced["ends_at"] == iso(T0 + timedelta(seconds=3900))
    desk.clock.advance(timedelta(hours=2))
    await tick(desk)
    (ended,) = desk.published("lease.ended")
    assert (ended["reason"], ended["ended_at"]) == ("completed", iso(T0 + timedelta(seconds=3900)))
    assert Decimal(ended["totals"]["total_charged"]) == Decimal("3.6")


async def test_a_report_naming_another_seller_changes_nothing(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    await leased(desk)
    with caplog.at_level(logging.INFO, "gpux.billing.provisioning"):
        await desk.run(BILLING_COMMANDS, ready(desk, seller="s2"))
    assert desk.published("lease.ready") == []
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "ready report ignored: not_the_parties")
    ]


# Failure --------------------------------------------------------------------------------------


async def test_a_failure_report_ends_the_lease_failed_and_releases_everything(
    desk: Desk,
) -> None:
    await leased(desk, after=timedelta(seconds=45))
    report = failure(desk)
    await desk.run(BILLING_COMMANDS, report, report)
    await desk.run(BILLING_COMMANDS, ready(desk), failure(desk))  # too late: failed already
    await assert_failed(desk, "seller_reported", T0 + timedelta(seconds=45), "PSU died")
    assert desk.published("lease.ready") == []


async def test_the_deadline_fails_the_lease_in_the_settlement_loop(desk: Desk) -> None:
    await leased(desk, after=TIMEOUT)
    assert await tick(desk) == settlement.Tick(looked_at=1)
    await assert_failed(desk, "provisioning_timeout", T0 + TIMEOUT)
    await desk.run(BILLING_COMMANDS, ready(desk))
    assert desk.published("lease.ready") == []


async def test_a_ready_report_made_after_the_deadline_fails_the_lease_at_its_deadline(
    desk: Desk,
) -> None:
    await leased(desk, after=TIMEOUT + timedelta(seconds=5))  # the loop has not run yet
    await desk.run(BILLING_COMMANDS, ready(desk))
    await assert_failed(desk, "provisioning_timeout", T0 + TIMEOUT)


async def test_a_failure_report_for_a_running_lease_changes_nothing(desk: Desk) -> None:
    await leased(desk)
    await desk.run(BILLING_COMMANDS, ready(desk))
    await desk.run(BILLING_COMMANDS, failure(desk))
    assert desk.published("lease.ended") == []
    assert len(desk.charged()) == 1


# Stops and interruptions --------------------------------------------------------------------


async def test_a_stop_while_provisioning_ends_it_stopped_with_nothing_charged(desk: Desk) -> None:
    await leased(desk, after=timedelta(seconds=30))
    stop = LeaseStopRequested(lease_id="L1", buyer_id="b1", requested_at=desk.clock.now())
    await desk.run(BILLING_COMMANDS, stop)
    (ended,) = desk.published("lease.ended")
    assert (ended["reason"], ended["failure"]) == ("stopped", None)
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert await desk.funds("b1") == (FUNDS, 0)
    assert [r["reason"] for r in released(desk)] == ["stopped"]


async def test_an_interrupted_provisioning_lease_ends_at_interrupt_at_with_nothing_charged(
    desk: Desk,
) -> None:
    await leased(desk, billing="second", tier=Tier.INTERRUPTIBLE)
    request = interruption_requested(
        "L1",
        noticed_at=desk.clock.now(),
        notice=timedelta(seconds=120),
        buyer_id="b1",
        offer_id="offer-L1",
        cause=InterruptionCause.PREEMPTED,
        taken_by=["od-1"],
    )
    await desk.run(BILLING_COMMANDS, wrap(request, producer="matching", occurred_at=T0))
    assert desk.uow.leases.next_due_at("L1") == T0 + timedelta(seconds=120)
    desk.clock.advance(timedelta(seconds=130))
    await tick(desk)
    (ended,) = desk.published("lease.ended")
    assert (ended["reason"], ended["ended_at"]) == ("interrupted", iso(T0 + timedelta(seconds=120)))
    assert Decimal(ended["totals"]["total_charged"]) == 0
    assert await desk.funds("b1") == (FUNDS, 0)


# Reports before their trade -------------------------------------------------------------------


async def test_a_ready_report_before_its_trade_is_kept_and_applied_when_the_trade_opens_it(
    desk: Desk,
) -> None:
    await funded(desk)
    desk.clock.advance(timedelta(seconds=20))
    report = ready(desk)
    assert (await desk.run(BILLING_COMMANDS, report)).applied == 1  # acknowledged at once
    assert report.event_id in desk.uow.inbox
    assert desk.published("lease.ready") == []
    desk.clock.advance(timedelta(seconds=10))
    since = len(desk.uow.published)
    await desk.run(MARKET_TRADES, trade())
    assert types(desk, since) == ["lease.opened", "lease.ready", "lease.charged"]
    (announced,) = desk.published("lease.ready")
    assert announced["ready_at"] == iso(T0 + timedelta(seconds=20))
    (charge,) = desk.charged()
    assert charge["period_start"] == iso(T0 + timedelta(seconds=20))
    assert desk.uow.state.pending_reports == {}
    await desk.run(MARKET_TRADES, trade())  # a replayed trade: nothing more
    assert len(desk.published("lease.ready")) == 1


async def test_a_failure_report_before_its_trade_fails_the_lease_as_it_opens(
    desk: Desk,
) -> None:
    await funded(desk)
    desk.clock.advance(timedelta(seconds=20))
    await desk.run(BILLING_COMMANDS, failure(desk), ready(desk))  # the first one stands
    since = len(desk.uow.published)
    await desk.run(MARKET_TRADES, trade())
    assert types(desk, since) == ["lease.opened", "lease.ended"]
    await assert_failed(desk, "seller_reported", T0 + timedelta(seconds=20), "PSU died")


async def test_a_report_before_a_trade_without_a_timeout_changes_nothing(desk: Desk) -> None:
    await funded(desk)
    await desk.run(BILLING_COMMANDS, failure(desk))
    await desk.run(MARKET_TRADES, trade(timeout_s=0))
    assert desk.published("lease.ended") == []
    assert desk.published("lease.ready") == []
    assert len(desk.charged()) == 1


# Batches --------------------------------------------------------------------------------------


def test_a_batch_locks_the_leases_its_reports_change_and_their_buyers() -> None:
    reports = [
        envelope(
            LeaseFailureReported(lease_id="l2", buyer_id="b2", seller_id="s1", reported_at=T0)
        ),
        envelope(LeaseReadyReported(lease_id="l1", buyer_id="b1", seller_id="s1", reported_at=T0)),
    ]
    assert locking.stopped(reports) == ["l1", "l2"]
    assert locking.owners(reports) == ["b1", "b2"]


async def test_reports_in_one_batch_end_as_they_would_one_by_one() -> None:
    batch, alone = Desk(), Desk()
    for desk in (batch, alone):
        await leased(desk, "L1")
        await leased(desk, "L2", billing="second")
        desk.clock.advance(timedelta(seconds=30))
    events = [
        ready(batch, "L1"),
        failure(batch, "L2"),
        ready(batch, "L1"),  # not provisioning any more
        failure(batch, "L3"),  # not opened yet: kept
    ]

    async def state(desk: Desk) -> Any:
        leases = [await desk.uow.leases.get(i) for i in ("L1", "L2")]
        return leases, await desk.funds("b1"), desk.uow.state.pending_reports

    await batch_and_alone(batch, alone, BILLING_COMMANDS, events, state)
    assert [e["lease_id"] for e in batch.published("lease.ready")] == ["L1"]
    assert [(e["lease_id"], e["reason"]) for e in batch.published("lease.ended")] == [
        ("L2", "failed")
    ]
