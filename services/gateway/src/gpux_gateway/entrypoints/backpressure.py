"""The gateway's door for writes: it counts the writes under way and follows its view
consumers' lag, and refuses a new write when either is beyond capacity (``domain.backpressure``).

Where the view consumers run in this process (``GPUX_GATEWAY_ROLE=all``), the lag is the
platform's ``gpux_consumer_lag`` gauge (set after every consumed batch, from the fetch's high
watermark), read for the gateway's own view topics every half second by ``loops.lag_loop``.
An ``api`` process, whose views are kept by ``views`` processes, reads the view groups' lag
from Kafka instead (``GroupLag``: end offsets against the groups' committed offsets). Either
way a request only compares two integers.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from types import TracebackType

from aiokafka.errors import KafkaError
from prometheus_client import Counter

from gpux_gateway.domain.backpressure import (
    Capacity,
    LagSample,
    Refusal,
    admit,
    follow_lag,
    view_lag,
)
from gpux_platform.lag import GroupLagMonitor
from gpux_platform.metrics import CONSUMER_LAG
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.gateway")

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


def consumer_lag(topics: Collection[str]) -> dict[str, int]:
    """Each partition's lag of ``topics`` (physical names) as the gauge holds it now."""
    read: dict[str, int] = {}
    for metric in CONSUMER_LAG.collect():
        for sample in metric.samples:
            topic = sample.labels.get("topic")
            if topic in topics:
                read[f"{topic}:{sample.labels.get('partition')}"] = int(sample.value)
    return read


class GroupLag:
    """Each partition's lag of the view groups, read from Kafka by the platform's reader
    (``gpux_platform.lag.GroupLagMonitor``: the partition's end offset minus the group's
    committed offset, its first offset before the group committed any).

    ``groups`` maps a topic's physical name to the physical name of the group that reads it.
    Connected on the first ``read``; a read that fails keeps the last reading (which then
    stops counting once it is stale, ``domain.backpressure``) and connects again next time.
    """

    def __init__(self, settings: GpuxSettings, groups: Mapping[str, str]) -> None:
        by_group: dict[str, list[str]] = {}
        for topic, group in groups.items():
            by_group.setdefault(group, []).append(topic)
        self._reader = GroupLagMonitor(settings, by_group)
        self._last: dict[str, int] = {}
        self._failing = False

    async def __aenter__(self) -> GroupLag:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._reader.close()

    async def read(self) -> dict[str, int]:
        """``topic:partition`` → records behind, now (or as last read, if Kafka fails)."""
        try:
            read = await self._reader.read()
        except (KafkaError, OSError, TimeoutError) as exc:
            if not self._failing:
                log.warning("view lag not read from Kafka", extra={"error": repr(exc)})
            self._failing = True
            await self._reader.close()
            return self._last
        self._failing = False
        self._last = {f"{found.topic}:{found.partition}": found.lag for found in read}
        return self._last
