"""When the gateway takes no new writes (pure): beyond its capacity it refuses them at the
door, with a time to retry, instead of queueing without bound; what it accepted completes.

Two signals, both the gateway's own: the writes it is working on (in flight), and how far
its view consumers are behind their topics (their lag, in records). A lag figure that has
not moved for a while is no longer taken: its partition may have gone to another instance,
and a gauge keeps its last value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Overload(StrEnum):
    """Why a write is refused."""

    WRITES_IN_FLIGHT = "writes_in_flight"
    """As many writes as the gateway takes at once are under way."""
    VIEW_LAG = "view_lag"
    """The views are too far behind their topics for more work to be taken on."""


@dataclass(frozen=True, slots=True)
class Capacity:
    """What the gateway takes on at most."""

    max_writes_in_flight: int
    """Writes under way at once; one more is refused."""
    max_view_lag: int
    """Records the view consumers may be behind, in all; beyond it writes are refused."""
    retry_after_s: int
    """What a refused client is told to wait (``Retry-After``)."""
    stale_after_s: float = 10.0
    """A partition's lag that has not changed for this long is not taken."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A write refused for overload: why, in words, and when to come back."""

    reason: Overload
    detail: str
    retry_after_s: int


@dataclass(frozen=True, slots=True)
class LagSample:
    """A partition's lag as last read, and since when it has had this value."""

    records: int
    since_s: float


def admit(capacity: Capacity, *, writes_in_flight: int, view_lag: int) -> Refusal | None:
    """Whether one more write may start now: None, or why not."""
    if writes_in_flight >= capacity.max_writes_in_flight:
        detail = (
            f"{writes_in_flight} writes are under way (at most {capacity.max_writes_in_flight})"
        )
        return Refusal(Overload.WRITES_IN_FLIGHT, detail, capacity.retry_after_s)
    if view_lag > capacity.max_view_lag:
        detail = f"the views are {view_lag} records behind (at most {capacity.max_view_lag})"
        return Refusal(Overload.VIEW_LAG, detail, capacity.retry_after_s)
    return None


def follow_lag(
    held: Mapping[str, LagSample], read: Mapping[str, int], now_s: float
) -> dict[str, LagSample]:
    """The samples after a new reading of each partition's lag at ``now_s``: a value that
    changed starts its time again; a partition no longer read is forgotten."""
    samples = {}
    for partition, records in read.items():
        before = held.get(partition)
        same = before is not None and before.records == records
        samples[partition] = before if same and before is not None else LagSample(records, now_s)
    return samples


def view_lag(samples: Mapping[str, LagSample], now_s: float, stale_after_s: float) -> int:
    """The records the views are behind: the sum over partitions whose lag moved lately."""
    return sum(s.records for s in samples.values() if now_s - s.since_s < stale_after_s)
