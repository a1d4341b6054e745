"""The door for writes: refused beyond the writes in flight or the views' lag, never counted
when refused, and a lag figure that stopped moving is not taken."""

from __future__ import annotations

import pytest

from gpux_gateway.domain.backpressure import (
    Capacity,
    LagSample,
    Overload,
    admit,
    follow_lag,
    view_lag,
)
from gpux_gateway.entrypoints.backpressure import WriteGate, consumer_lag
from gpux_platform.metrics import CONSUMER_LAG

pytestmark = pytest.mark.unit

CAPACITY = Capacity(max_writes_in_flight=2, max_view_lag=100, retry_after_s=3, stale_after_s=10)


def test_a_write_is_refused_at_the_in_flight_limit_or_beyond_the_lag_limit() -> None:
    assert admit(CAPACITY, writes_in_flight=1, view_lag=100) is None
    full = admit(CAPACITY, writes_in_flight=2, view_lag=0)
    assert full is not None
    assert (full.reason, full.retry_after_s) == (Overload.WRITES_IN_FLIGHT, 3)
    behind = admit(CAPACITY, writes_in_flight=0, view_lag=101)
    assert behind is not None
    assert behind.reason is Overload.VIEW_LAG
    assert "101 records behind" in behind.detail


def test_a_lag_counts_while_it_moves_and_a_partition_no_longer_read_is_forgotten() -> None:
    samples = follow_lag({}, {"t:0": 50, "t:1": 70}, now_s=0.0)
    samples = follow_lag(samples, {"t:0": 50, "t:1": 80}, now_s=9.0)
    assert samples == {"t:0": LagSample(50, 0.0), "t:1": LagSample(80, 9.0)}
    assert view_lag(samples, 9.0, stale_after_s=10) == 130
    assert view_lag(samples, 12.0, stale_after_s=10) == 80  # t:0 stood still for 12 s
    assert follow_lag(samples, {"t:1": 80}, now_s=13.0) == {"t:1": LagSample(80, 9.0)}


def test_the_gate_counts_admitted_writes_until_they_are_answered() -> None:
    gate = WriteGate(CAPACITY)
    assert gate.enter() is None
    assert gate.enter() is None
    refused = gate.enter()
    assert refused is not None
    assert gate.in_flight == 2  # a refused write is not under way
    gate.leave()
    assert gate.enter() is None
    assert refused.retry_after_s == 3


def test_the_gate_follows_the_views_lag_as_the_platform_gauge_holds_it() -> None:
    topic = "test-backpressure.orders.status"
    CONSUMER_LAG.labels("gateway-views", topic, "0").set(150)
    CONSUMER_LAG.labels("gateway-views", topic, "1").set(20)
    CONSUMER_LAG.labels("someone-else", "someone-else.orders.status", "0").set(10_000)
    read = consumer_lag({topic})
    assert read == {f"{topic}:0": 150, f"{topic}:1": 20}
    gate = WriteGate(CAPACITY)
    gate.take_lag(read, now_s=1.0)
    assert gate.view_lag == 170
    refused = gate.enter()
    assert refused is not None
    assert refused.reason is Overload.VIEW_LAG
    gate.take_lag(read, now_s=20.0)  # the figures stood still: no longer taken
    assert gate.enter() is None
