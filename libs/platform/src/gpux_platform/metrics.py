"""Prometheus metrics every service exposes on /metrics (one registry per process)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

HTTP_SECONDS = Histogram(
    "gpux_http_request_seconds",
    "HTTP request latency by route template and status.",
    ("method", "route", "status"),
)
HANDLER_SECONDS = Histogram(
    "gpux_handler_seconds",
    "Time to apply one consumed batch (decode, its units of work, after-commit steps).",
    ("topic", "outcome"),
)
RECORDS = Counter(
    "gpux_records_total",
    "Consumed records by topic and outcome (applied, duplicate, skipped: unreadable,"
    " unhandled: no handler for its type, set_aside, retry_later, failed).",
    ("topic", "outcome"),
)
BATCH_RECORDS = Histogram(
    "gpux_batch_records",
    "Records per consumed batch (each batch is one unit of work and one offset commit).",
    ("topic",),
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
SETTLEMENT_SECONDS = Histogram(
    "gpux_settlement_seconds",
    "Time of one settlement batch of running leases (billing).",
)
LEASE_EVENTS = Counter(
    "gpux_lease_events_total",
    "Leases by settlement event (looked_at: picked up by the loop; set_aside: refused).",
    ("event",),
)
CONSUMER_LAG = Gauge(
    "gpux_consumer_lag",
    "Records of a partition after the one just consumed (high watermark - offset - 1).",
    ("topic", "partition"),
)
EVENTS_PUBLISHED = Counter(
    "gpux_events_published_total",
    "Events the outbox relay published, by topic and type (orders: order.placed;"
    " trades: trade.executed; charges: lease.charged). A crash before the relay marks a"
    " batch publishes it again, so this counts at least once.",
    ("topic", "event_type"),
)
OUTBOX_WAKEUPS = Counter(
    "gpux_outbox_wakeups_total",
    "What woke an outbox relay, by schema (notify: a commit's NOTIFY; poll: the fallback"
    " poll; lost: its LISTEN connection ended and it listens again). Polls that outnumber"
    " notifies under load mean the relay is not listening.",
    ("schema", "cause"),
)
DEGRADED = Counter(
    "gpux_degraded_total",
    "Operations done in a degraded way because a store did not answer, by what"
    " (rate_limit: a request counted against its limit in this process, Redis being down).",
    ("what",),
)
