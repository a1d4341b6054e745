"""The platform's Prometheus metric families, and the registry of the ones a service uses.

The families are made on no registry: each service's runtime has a registry of its own
(``ServiceMetrics``) and registers the families it uses when it is wired (the HTTP histogram
by its app, ``CONSUMING`` when it has consumers, ``OUTBOX`` when it runs a relay, the
families its spec names), so its ``/metrics`` shows those and its own module's families (on
``prometheus_client``'s default registry: in a service's process, only that service's), not
every family of every service.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

HTTP_SECONDS = Histogram(
    "gpux_http_request_seconds",
    "HTTP request latency by route template and status.",
    ("method", "route", "status"),
    registry=None,
)
HANDLER_SECONDS = Histogram(
    "gpux_handler_seconds",
    "Time to apply one consumed batch (decode, its units of work, after-commit steps).",
    ("topic", "outcome"),
    registry=None,
)
RECORDS = Counter(
    "gpux_records_total",
    "Consumed records by topic and outcome (applied, duplicate, skipped: unreadable,"
    " unhandled: no handler for its type, set_aside, retry_later, failed).",
    ("topic", "outcome"),
    registry=None,
)
BATCH_RECORDS = Histogram(
    "gpux_batch_records",
    "Records per consumed batch (each batch is one unit of work and one offset commit).",
    ("topic",),
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
    registry=None,
)
SETTLEMENT_SECONDS = Histogram(
    "gpux_settlement_seconds",
    "Time of one settlement batch of running leases (billing).",
    registry=None,
)
LEASE_EVENTS = Counter(
    "gpux_lease_events_total",
    "Leases by settlement event (looked_at: picked up by the loop; set_aside: refused).",
    ("event",),
    registry=None,
)
CONSUMER_LAG = Gauge(
    "gpux_consumer_lag",
    "Records of a partition its consumer group has still to consume: the partition's end"
    " offset - the group's committed offset, read from the broker every few seconds whether"
    " records arrive or not (a stopped consumer's lag rises), and after each consumed batch"
    " (high watermark - last offset - 1).",
    ("group", "topic", "partition"),
    registry=None,
)
EVENTS_PUBLISHED = Counter(
    "gpux_events_published_total",
    "Events the outbox relay published, by topic and type (orders: order.placed;"
    " trades: trade.executed; charges: lease.charged). A crash before the relay marks a"
    " batch publishes it again, so this counts at least once.",
    ("topic", "event_type"),
    registry=None,
)
OUTBOX_WAKEUPS = Counter(
    "gpux_outbox_wakeups_total",
    "What woke an outbox relay, by schema (notify: a commit's NOTIFY; poll: the fallback"
    " poll; lost: its LISTEN connection ended and it listens again). Polls that outnumber"
    " notifies under load mean the relay is not listening.",
    ("schema", "cause"),
    registry=None,
)
DEGRADED = Counter(
    "gpux_degraded_total",
    "Operations done in a degraded way because a store did not answer, by what"
    " (rate_limit: a request counted against its limit in this process, Redis being down).",
    ("what",),
    registry=None,
)
OUTBOX_BACKLOG = Gauge(
    "gpux_outbox_backlog",
    "Outbox rows committed and not yet published, by schema (measured by its relay).",
    ("schema",),
    registry=None,
)
OUTBOX_OLDEST_AGE = Gauge(
    "gpux_outbox_oldest_age_seconds",
    "Age of the oldest unpublished outbox row, by schema (0 when none waits).",
    ("schema",),
    registry=None,
)

HTTP: tuple[Collector, ...] = (HTTP_SECONDS, DEGRADED)
"""What every service records: its HTTP app's requests, and what it did degraded for a store
that did not answer."""
CONSUMING: tuple[Collector, ...] = (HANDLER_SECONDS, RECORDS, BATCH_RECORDS, CONSUMER_LAG)
"""What a service with Kafka consumers records."""
OUTBOX: tuple[Collector, ...] = (
    EVENTS_PUBLISHED,
    OUTBOX_WAKEUPS,
    OUTBOX_BACKLOG,
    OUTBOX_OLDEST_AGE,
)
"""What a service running an outbox relay records."""
SETTLEMENT: tuple[Collector, ...] = (SETTLEMENT_SECONDS, LEASE_EVENTS)
"""Billing's settlement loop."""


class ServiceMetrics:
    """One service's registry: the platform families it uses, and its own module's families
    (``prometheus_client``'s default registry, where a service's module-level metrics are)."""

    def __init__(self, own: CollectorRegistry | None = REGISTRY) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._own = own
        self._used: set[int] = set()

    def use(self, families: Iterable[Collector]) -> None:
        """Register families (each once, however often it is named)."""
        for family in families:
            if id(family) not in self._used:
                self._used.add(id(family))
                self.registry.register(family)

    def collect(self) -> Iterator[Metric]:
        """The families this service exposes on ``/metrics``."""
        yield from self.registry.collect()
        if self._own is not None:
            yield from self._own.collect()
