"""The gateway's door for writes: it counts the writes under way and follows its view
consumers' lag, and refuses a new write when either is beyond capacity (``domain.backpressure``).

The lag is the platform's ``gpux_consumer_lag`` gauge (set after every consumed batch, from
the fetch's high watermark), read for the gateway's own view topics every half second by
``loops.lag_loop``: a request only compares two integers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from prometheus_client import Counter

from gpux_gateway.domain.backpressure import (
    Capacity,
    LagSample,
    Refusal,
    admit,
    follow_lag,
    view_lag,
)
from gpux_platform.metrics import CONSUMER_LAG
from gpux_platform.problems import ProblemError

REFUSED = Counter(
    "gpux_gateway_writes_refused_total",
    "Writes the gateway refused with 503 for overload, by reason (writes_in_flight, view_lag).",
    ("reason",),
)


class WriteGate:
    """The writes under way, and the views' lag as last read."""

    def __init__(self, capacity: Capacity) -> None:
        self.capacity = capacity
        self.in_flight = 0
        """Writes admitted and not yet answered."""
        self.view_lag = 0
        """Records the views are behind, as last read."""
        self._samples: dict[str, LagSample] = {}

    def enter(self) -> Refusal | None:
        """Admit one write (counted until ``leave``), or say why not."""
        refusal = admit(self.capacity, writes_in_flight=self.in_flight, view_lag=self.view_lag)
        if refusal is None:
            self.in_flight += 1
        else:
            REFUSED.labels(refusal.reason.value).inc()
        return refusal

    def leave(self) -> None:
        """An admitted write was answered."""
        self.in_flight -= 1

    def take_lag(self, read: Mapping[str, int], now_s: float) -> None:
        """A new reading of each view partition's lag, at ``now_s`` (a monotonic clock)."""
        self._samples = follow_lag(self._samples, read, now_s)
        self.view_lag = view_lag(self._samples, now_s, self.capacity.stale_after_s)


def overloaded(refusal: Refusal) -> ProblemError:
    """The 503 problem of a refused write, with its ``Retry-After``."""
    return ProblemError(
        503,
        "overloaded",
        "Overloaded",
        f"{refusal.detail}: retry later",
        headers={"Retry-After": str(refusal.retry_after_s)},
    )


def consumer_lag(topics: Collection[str]) -> dict[str, int]:
    """Each partition's lag of ``topics`` (physical names) as the gauge holds it now."""
    read: dict[str, int] = {}
    for metric in CONSUMER_LAG.collect():
        for sample in metric.samples:
            topic = sample.labels.get("topic")
            if topic in topics:
                read[f"{topic}:{sample.labels.get('partition')}"] = int(sample.value)
    return read
