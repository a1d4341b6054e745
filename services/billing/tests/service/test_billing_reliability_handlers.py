"""Seller reliability on the memory unit of work: billing counts each lease's outcome where it
decides it (ready in time, failed, reclaimed), each lease at most once per kind, and announces
one ``reliability.changed`` per changed offer per unit on billing.reliability (key: the offer
id), with the offer's counts and its seller's summed over all its offers. Redeliveries,
repeated reports and repeated settlements count nothing more; a preemption counts nothing; a
lease whose offer has no provisioning timeout is not measured ready in time."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpux_billing.service import settlement
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.leases import LeaseEndReason, LeaseFailureReported, LeaseReadyReported
from gpux_contracts.offers import Tier
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import BILLING_COMMANDS, BILLING_RELIABILITY, MARKET_TRADES
from gpux_devinfra.testing.payloads import interruption_requested, trade_executed

from .billing_desk import T0, Desk, envelope, reliability

pytestmark = pytest.mark.unit

TIMEOUT = timedelta(seconds=600)


def counts(ready: int = 0, failed: int = 0, reclaimed: int = 0) -> dict[str, int]:
    return {"ready_in_time": ready, "failed": failed, "reclaimed": reclaimed}


def trade(
    desk: Desk,
    lease_id: str,
    offer: str = "offer-a",
    seller: str = "s1",
    *,
    timeout_s: int = 0,
    tier: Tier = Tier.ON_DEMAND,
) -> Envelope[Any]:
    """A trade of b1 (paid from its available balance) for 2 GPUs of ``seller``'s ``offer``;
    interruptible ones billed per second, as matching trades them."""
    billing = "second" if tier is Tier.INTERRUPTIBLE else "hour"
    payload = trade_executed(
        trade_id=lease_id,
        order_id=f"o-{lease_id}",
        offer_id=offer,
        seller_id=seller,
        gpus=2,
        price="1.00",
        tier=tier.value,
        billing=billing,
        executed_at=desk.clock.now(),
        provisioning_timeout_seconds=timeout_s,
    )
    return envelope(payload, "matching", desk.clock.now())


def ready(desk: Desk, lease_id: str, seller: str = "s1") -> Envelope[Any]:
    now = desk.clock.now()
    report = LeaseReadyReported(lease_id=lease_id, buyer_id="b1", seller_id=seller, reported_at=now)
    return wrap(report, producer="gateway", occurred_at=now)


def failure(desk: Desk, lease_id: str, seller: str = "s1") -> Envelope[Any]:
    now = desk.clock.now()
    report = LeaseFailureReported(
        lease_id=lease_id, buyer_id="b1", seller_id=seller, reported_at=now, detail="no GPU"
    )
    return wrap(report, producer="gateway", occurred_at=now)


def interruption(
    desk: Desk, lease_id: str, cause: InterruptionCause, offer: str = "offer-a"
) -> Envelope[Any]:
    now = desk.clock.now()
    request = interruption_requested(
        lease_id,
        noticed_at=now,
        notice=timedelta(seconds=120),
        offer_id=offer,
        cause=cause,
        taken_by=["od-1"] if cause is InterruptionCause.PREEMPTED else [],
    )
    return wrap(request, producer="matching", occurred_at=now)


async def tick(desk: Desk) -> None:
    async with desk.uow:
        await settlement.settle_due(desk.uow, 100)
        await desk.uow.commit()


async def funded(desk: Desk) -> None:
    await desk.credit("b1", "1000")


def changes(desk: Desk, since: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The ``reliability.changed`` committed after the first ``since`` events: (key, payload)."""
    return [
        (m.key, m.envelope.payload.model_dump(mode="json"))
        for m in desk.uow.published[since:]
        if m.topic is BILLING_RELIABILITY
    ]


def offer_changes(desk: Desk, since: int = 0) -> list[tuple[str, dict[str, int], str]]:
    """(offer, its counts, the lease counted last) of each change after ``since``."""
    return [(key, p["offer"], p["lease_id"]) for key, p in changes(desk, since)]


# Ready in time ----------------------------------------------------------------------------


async def test_a_lease_without_a_provisioning_timeout_counts_nothing_its_seller_no_rate(
    desk: Desk,
) -> None:
    """Adapted deliberately: such a lease counted ready in time as it opened, and its seller's
    reports were refused (not provisioning), so a seller whose offers state no timeout was
    1.0000 on every lease and met every minimum. It is not measured now."""
    await funded(desk)
    await desk.run(MARKET_TRADES, trade(desk, "t1"), trade(desk, "t2", "offer-b"))
    await desk.run(BILLING_COMMANDS, failure(desk, "t1"), ready(desk, "t2"))  # not provisioning
    desk.clock.advance(TIMEOUT)
    await tick(desk)
    assert changes(desk) == []
    assert desk.uow.reliability.offer("offer-a") is None  # nothing counted: no rate
    assert reliability(desk) == ({}, {})


async def test_a_lease_its_sellers_earlier_report_made_ready_counts_once_as_it_opens(
    desk: Desk,
) -> None:
    await funded(desk)
    await desk.run(BILLING_COMMANDS, ready(desk, "t1"))  # kept for its trade
    opened = trade(desk, "t1", timeout_s=600)
    await desk.run(MARKET_TRADES, opened)
    ((key, changed),) = changes(desk)
    assert key == "offer-a"
    assert changed == {
        "seller_id": "s1",
        "offer_id": "offer-a",
        "offer": counts(ready=1),
        "seller": counts(ready=1),
        "lease_id": "t1",
        "as_of": T0.isoformat().replace("+00:00", "Z"),
    }
    since = len(desk.uow.published)
    await desk.run(MARKET_TRADES, opened)  # redelivered: the inbox has it
    again = trade(desk, "t1", timeout_s=600)  # the same trade under another event id
    await desk.run(MARKET_TRADES, again)
    assert changes(desk, since) == []
    assert desk.uow.reliability.offer("offer-a") == ReliabilityCounts(ready_in_time=1)


async def test_a_provisioning_lease_counts_when_its_seller_reports_it_ready_in_time(
    desk: Desk,
) -> None:
    await funded(desk)
    await desk.run(MARKET_TRADES, trade(desk, "t1", timeout_s=600))
    assert changes(desk) == []  # provisioning: nothing decided yet
    desk.clock.advance(timedelta(seconds=100))
    report = ready(desk, "t1")
    await desk.run(BILLING_COMMANDS, report, report, ready(desk, "t1"))
    await desk.run(BILLING_COMMANDS, ready(desk, "t1"))  # not provisioning any more
    desk.clock.advance(TIMEOUT)
    await tick(desk)  # the deadline no longer applies
    assert offer_changes(desk) == [("offer-a", counts(ready=1), "t1")]


async def test_the_event_is_in_the_trace_of_its_cause_and_named_by_offer_and_total(
    desk: Desk,
) -> None:
    await funded(desk)
    await desk.run(MARKET_TRADES, trade(desk, "t1", timeout_s=600))
    report = ready(desk, "t1")
    await desk.run(BILLING_COMMANDS, report)
    (message,) = [m for m in desk.uow.published if m.topic is BILLING_RELIABILITY]
    assert message.envelope.causation_id == report.event_id
    assert message.envelope.correlation_id == report.correlation_id
    assert message.envelope.event_id == stable_id("reliability", "offer-a", "1")
    assert message.envelope.producer == "billing"


# Failed ---------------------------------------------------------------------------------------


async def test_a_failure_report_counts_failed_once(desk: Desk) -> None:
    await funded(desk)
    await desk.run(MARKET_TRADES, trade(desk, "t1", timeout_s=600))
    report = failure(desk, "t1")
    await desk.run(BILLING_COMMANDS, report)
    await desk.run(BILLING_COMMANDS, report)
    await desk.run(BILLING_COMMANDS, failure(desk, "t1"), ready(desk, "t1"))  # over already
    desk.clock.advance(TIMEOUT)
    await tick(desk)
    assert offer_changes(desk) == [("offer-a", counts(failed=1), "t1")]


async def test_the_deadline_counts_failed_once_whichever_path_sees_it(desk: Desk) -> None:
    await funded(desk)
    await desk.run(MARKET_TRADES, trade(desk, "t1", timeout_s=600))
    await desk.run(MARKET_TRADES, trade(desk, "t2", "offer-b", timeout_s=600))
    desk.clock.advance(TIMEOUT)
    await desk.run(BILLING_COMMANDS, ready(desk, "t1"))  # late: the lease fails there
    await tick(desk)  # t2's deadline, by the settlement loop
    await tick(desk)
    assert offer_changes(desk) == [
        ("offer-a", counts(failed=1), "t1"),
        ("offer-b", counts(failed=1), "t2"),
    ]
    looped = [m for m in desk.uow.published if m.topic is BILLING_RELIABILITY][-1]
    assert looped.envelope.causation_id is None  # billing's own timer decided it


# Reclaimed ------------------------------------------------------------------------------------


async def test_a_reclaim_counts_reclaimed_once_and_a_preemption_nothing(desk: Desk) -> None:
    await funded(desk)
    interruptible = Tier.INTERRUPTIBLE
    await desk.run(MARKET_TRADES, trade(desk, "t1", tier=interruptible))  # not measured ready
    await desk.run(MARKET_TRADES, trade(desk, "t2", "offer-b", tier=interruptible))
    since = len(desk.uow.published)
    reclaim = interruption(desk, "t1", InterruptionCause.RECLAIMED)
    await desk.run(BILLING_COMMANDS, reclaim, reclaim)
    await desk.run(BILLING_COMMANDS, interruption(desk, "t1", InterruptionCause.RECLAIMED))
    await desk.run(
        BILLING_COMMANDS, interruption(desk, "t2", InterruptionCause.PREEMPTED, "offer-b")
    )
    desk.clock.advance(timedelta(seconds=300))
    await tick(desk)  # both end interrupted: that counts nothing more
    assert offer_changes(desk, since) == [("offer-a", counts(reclaimed=1), "t1")]
    ended = {p["lease_id"]: p["reason"] for p in desk.published("lease.ended")}
    assert ended == {"t1": LeaseEndReason.INTERRUPTED, "t2": LeaseEndReason.INTERRUPTED}
    assert desk.uow.reliability.offer("offer-b") is None


# Before the trade, and batches -----------------------------------------------------------------


async def test_what_came_before_its_trade_counts_as_the_lease_opens_once_per_offer(
    desk: Desk,
) -> None:
    await funded(desk)
    await desk.run(
        BILLING_COMMANDS,
        interruption(desk, "t1", InterruptionCause.RECLAIMED),
        failure(desk, "t2"),
        ready(desk, "t3"),
    )
    assert changes(desk) == []  # kept for their trades
    await desk.run(
        MARKET_TRADES,
        trade(desk, "t1", tier=Tier.INTERRUPTIBLE),
        trade(desk, "t2", "offer-b", timeout_s=600),
        trade(desk, "t3", "offer-c", timeout_s=600),
    )
    assert offer_changes(desk) == [
        ("offer-a", counts(reclaimed=1), "t1"),  # no provisioning timeout: not measured ready
        ("offer-b", counts(failed=1), "t2"),
        ("offer-c", counts(ready=1), "t3"),
    ]


async def test_a_batch_announces_each_offer_once_with_its_sellers_counts_over_its_offers(
    desk: Desk,
) -> None:
    """Adapted deliberately: the leases that open ready are provisioning ones their sellers'
    earlier reports made ready (one without a provisioning timeout, t7, counts nothing)."""
    await funded(desk)
    sellers = {"t1": "s1", "t2": "s1", "t3": "s1", "t4": "s1", "t5": "s2"}
    await desk.run(BILLING_COMMANDS, *(ready(desk, t, seller) for t, seller in sellers.items()))
    await desk.run(
        MARKET_TRADES,
        trade(desk, "t1", timeout_s=600),
        trade(desk, "t2", timeout_s=600),
        trade(desk, "t3", timeout_s=600),
        trade(desk, "t4", "offer-b", timeout_s=600),
        trade(desk, "t5", "offer-c", "s2", timeout_s=600),
        trade(desk, "t6", "offer-b", timeout_s=600),
        trade(desk, "t7", "offer-d"),
    )
    found = changes(desk)
    assert [(key, p["offer"], p["lease_id"]) for key, p in found] == [
        ("offer-a", counts(ready=3), "t3"),
        ("offer-b", counts(ready=1), "t4"),
        ("offer-c", counts(ready=1), "t5"),
    ]
    assert [(p["seller_id"], p["seller"]) for _, p in found] == [
        ("s1", counts(ready=4)),
        ("s1", counts(ready=4)),
        ("s2", counts(ready=1)),
    ]
    since = len(desk.uow.published)
    await desk.run(BILLING_COMMANDS, failure(desk, "t6"))
    ((key, changed),) = changes(desk, since)
    assert (key, changed["offer"], changed["seller"]) == (
        "offer-b",
        counts(ready=1, failed=1),
        counts(ready=4, failed=1),
    )


# The counts are the leases' outcomes ----------------------------------------------------------

LEASES = [  # (lease, offer, seller, provisioning timeout, tier)
    ("l1", "offer-a", "s1", 600, Tier.INTERRUPTIBLE),
    ("l2", "offer-a", "s1", 0, Tier.INTERRUPTIBLE),
    ("l3", "offer-b", "s1", 600, Tier.ON_DEMAND),
    ("l4", "offer-c", "s2", 600, Tier.INTERRUPTIBLE),
]
ACTIONS = ("trade", "ready", "failure", "reclaim", "preempt")

steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(ACTIONS), st.integers(0, len(LEASES) - 1)),
        st.tuples(st.just("trade"), st.integers(0, len(LEASES) - 1)),  # twice as likely
        st.tuples(st.just("wait"), st.sampled_from([0, 100, 700])),
        st.tuples(st.just("again"), st.integers(0, 3)),
    ),
    min_size=2,
    max_size=16,
)


def _event(desk: Desk, action: str, index: int) -> Envelope[Any]:
    lease_id, offer, seller, timeout_s, tier = LEASES[index]
    if action == "trade":
        return trade(desk, lease_id, offer, seller, timeout_s=timeout_s, tier=tier)
    if action == "ready":
        return ready(desk, lease_id, seller)
    if action == "failure":
        return failure(desk, lease_id, seller)
    cause = InterruptionCause.RECLAIMED if action == "reclaim" else InterruptionCause.PREEMPTED
    return interruption(desk, lease_id, cause, offer)


async def _play(desk: Desk, script: list[Any]) -> None:
    """Run each step as its own unit; ``again`` delivers an earlier event once more."""
    await funded(desk)
    sent: list[Envelope[Any]] = []
    for action, value in script:
        if action == "wait":
            desk.clock.advance(timedelta(seconds=value))
            await tick(desk)
            continue
        if action == "again":
            if not sent:
                continue
            event = sent[-1 - min(value, len(sent) - 1)]
        else:
            event = _event(desk, action, value)
            sent.append(event)
        topic = MARKET_TRADES if event.event_type == "trade.executed" else BILLING_COMMANDS
        await desk.run(topic, event)


def audited(desk: Desk) -> tuple[dict[str, ReliabilityCounts], dict[str, ReliabilityCounts]]:
    """The counts recomputed from the leases as they stand (the independent auditor): ready
    in time, those traded with a provisioning timeout that became ready (no deadline left);
    failed, those that ended so; reclaimed, those their seller reclaimed. A seller's: the sum
    of its offers'."""
    timeout_of = {lease_id: timeout_s for lease_id, _, _, timeout_s, _ in LEASES}
    offers: dict[str, list[str]] = {}
    for stored in desk.uow.state.leases.values():
        lease, state = stored.lease, stored.lease.state
        kinds = offers.setdefault(lease.offer_id, [])
        if timeout_of[lease.id] > 0 and state.provisioning_deadline is None:
            kinds.append("ready_in_time")
        if state.end_reason is LeaseEndReason.FAILED:
            kinds.append("failed")
        if state.interruption and state.interruption.cause is InterruptionCause.RECLAIMED:
            kinds.append("reclaimed")
    by_offer = {
        offer: ReliabilityCounts(**{k: kinds.count(k) for k in counts()})
        for offer, kinds in offers.items()
        if kinds
    }
    seller_of = {offer: seller for _, offer, seller, _, _ in LEASES}
    sellers: dict[str, dict[str, int]] = {}
    for offer, found in by_offer.items():
        summed = sellers.setdefault(seller_of[offer], counts())
        for kind in summed:
            summed[kind] += getattr(found, kind)
    return by_offer, {s: ReliabilityCounts(**c) for s, c in sellers.items()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=steps)
def test_the_counts_announced_are_the_leases_outcomes_each_counted_once(
    script: list[Any],
) -> None:
    desk = Desk()
    asyncio.run(_play(desk, script))
    offers, sellers = reliability(desk)
    assert (offers, sellers) == audited(desk)
    for offer_id, offer in offers.items():
        assert desk.uow.reliability.offer(offer_id) == offer
