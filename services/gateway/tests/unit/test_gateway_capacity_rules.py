"""The capacity rules of the gateway's domain: an offer's interruptible price and pool, a
lease's status, its seconds left and its reclaim, and the re-buy of an interrupted lease."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpux_contracts.leases import LeaseStatus
from gpux_contracts.orders import OrderTier, OrderType, TimeInForce
from gpux_devinfra.testing.payloads import order_placed
from gpux_gateway.domain.leases import (
    ReclaimRefusal,
    lease_status,
    reclaim_refusal,
    runs_until,
    seconds_left,
)
from gpux_gateway.domain.offers import (
    ON_BOOK,
    Standing,
    after_report,
    interruptible_price_problem,
    pool_shown,
)
from gpux_gateway.domain.rebuy import rebuy, rebuy_event_id, rebuy_order_id

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)
prices = st.decimals(min_value=Decimal("0.0001"), max_value=Decimal(99_999), places=4)
instants = st.datetimes(
    min_value=datetime(2025, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)
)


@given(prices, prices)
def test_an_interruptible_price_is_at_most_the_on_demand_price(
    on_demand: Decimal, interruptible: Decimal
) -> None:
    problem = interruptible_price_problem("on_demand", on_demand, interruptible)
    assert (problem is None) == (interruptible <= on_demand)
    assert interruptible_price_problem("on_demand", None, interruptible) is None  # pricing's
    assert interruptible_price_problem("interruptible", on_demand, interruptible) is not None
    assert interruptible_price_problem("interruptible", on_demand, None) is None


@given(
    gpus=st.integers(1, 4096),
    remaining=st.integers(0, 4096),
    capacity=st.none() | st.integers(0, 4096),
    leased=st.none() | st.integers(0, 4096),
)
def test_the_pool_is_the_books_word_else_the_offers_gpus_with_the_rest_leased(
    gpus: int, remaining: int, capacity: int | None, leased: int | None
) -> None:
    pool = pool_shown(
        gpus=gpus, remaining_gpus=remaining, capacity_gpus=capacity, leased_gpus=leased
    )
    assert pool.remaining_gpus == remaining
    assert pool.capacity_gpus == (gpus if capacity is None else capacity)
    assert pool.leased_gpus >= 0
    if leased is not None:
        assert pool.leased_gpus == leased
    elif remaining <= pool.capacity_gpus:
        assert pool.leased_gpus + pool.remaining_gpus == pool.capacity_gpus


def test_an_exhausted_offer_is_live_again_and_keeps_its_standing_through_a_change() -> None:
    full = Standing("exhausted", 0, None)
    assert after_report(full, Standing("live", 2, None)) == Standing("live", 2, None)
    for held in ON_BOOK:
        kept = after_report(Standing(held, 1, None), Standing("accepted", 8, "too_cheap"))
        assert kept == Standing(held, 1, "too_cheap")


@given(
    ended=st.booleans(),
    interrupt_at=st.none() | instants,
    started_at=st.none() | instants,
    now=instants,
)
def test_a_lease_status_is_ended_then_interrupting_then_scheduled_then_running(
    ended: bool, interrupt_at: datetime | None, started_at: datetime | None, now: datetime
) -> None:
    status = lease_status(ended=ended, interrupt_at=interrupt_at, started_at=started_at, now=now)
    if ended:
        assert status is LeaseStatus.ENDED
    elif interrupt_at is not None:
        assert status is LeaseStatus.INTERRUPTING
    elif started_at is not None and started_at > now:
        assert status is LeaseStatus.SCHEDULED
    else:
        assert status is LeaseStatus.RUNNING


@given(interrupt_at=instants, now=instants)
def test_seconds_left_are_whole_rounded_down_and_never_negative(
    interrupt_at: datetime, now: datetime
) -> None:
    left = seconds_left(interrupt_at, now)
    assert left >= 0
    assert now + timedelta(seconds=left) <= max(interrupt_at, now)
    if interrupt_at > now:
        assert now + timedelta(seconds=left + 1) > interrupt_at


def test_a_lease_accrues_until_its_end_or_its_interruption_whichever_is_first() -> None:
    early, late = NOW, NOW + timedelta(hours=1)
    assert runs_until(None, None) is None
    assert runs_until(late, None) == late
    assert runs_until(None, early) == early
    assert runs_until(late, early) == runs_until(early, late) == early


def test_a_reclaim_is_of_a_running_interruptible_lease_and_refusals_have_an_order() -> None:
    assert reclaim_refusal(tier="interruptible", status=LeaseStatus.RUNNING) is None
    assert reclaim_refusal(tier="on_demand", status=LeaseStatus.ENDED) is ReclaimRefusal.ENDED
    assert (
        reclaim_refusal(tier="on_demand", status=LeaseStatus.SCHEDULED)
        is ReclaimRefusal.NOT_INTERRUPTIBLE
    )
    assert (
        reclaim_refusal(tier="interruptible", status=LeaseStatus.INTERRUPTING)
        is ReclaimRefusal.INTERRUPTING
    )
    assert list(ReclaimRefusal) == [
        ReclaimRefusal.ENDED,
        ReclaimRefusal.NOT_INTERRUPTIBLE,
        ReclaimRefusal.INTERRUPTING,
    ]


lease_ids = st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ:b", min_size=1, max_size=40)


@given(
    lease_id=lease_ids,
    gpus=st.integers(1, 64),
    tier=st.sampled_from(OrderTier),
    price=st.none() | prices,
    hours=st.none() | st.integers(1, 8760),
)
def test_a_rebuy_is_the_same_order_for_the_leases_gpus_under_an_id_of_the_lease(
    lease_id: str, gpus: int, tier: OrderTier, price: Decimal | None, hours: int | None
) -> None:
    original = order_placed(gpus=8, price=price, tier=tier, hours=hours, rebuy_on_interruption=True)
    again = rebuy(original, lease_id=lease_id, gpus=gpus, now=NOW)
    assert again is not None
    same = {"order_id", "gpus", "rebuy_of"}
    assert again.model_dump(exclude=same) == original.model_dump(exclude=same)
    assert (again.gpus, again.rebuy_of, again.rebuy_on_interruption) == (gpus, lease_id, True)
    assert again.order_id == rebuy_order_id(lease_id) != original.order_id
    assert rebuy(original, lease_id=lease_id, gpus=gpus, now=NOW) == again  # deterministic
    assert rebuy_event_id(lease_id) != again.order_id
    unasked = original.model_copy(update={"rebuy_on_interruption": False})
    assert rebuy(unasked, lease_id=lease_id, gpus=gpus, now=NOW) is None


def test_a_gtd_order_is_bought_again_only_before_its_expiry() -> None:
    gtd = order_placed(
        price="1",
        type=OrderType.LIMIT,
        time_in_force=TimeInForce.GTD,
        expires_at=NOW + timedelta(hours=1),
        rebuy_on_interruption=True,
    )
    assert rebuy(gtd, lease_id="L1", gpus=1, now=NOW) is not None
    assert rebuy(gtd, lease_id="L1", gpus=1, now=NOW + timedelta(hours=1)) is None
    ids = {rebuy_order_id(f"L{n}") for n in range(100)}
    assert len(ids) == 100
    assert all(len(i) <= 64 and i.replace("-", "").isalnum() for i in ids)  # a path's id
