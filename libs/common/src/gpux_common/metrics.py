"""Prometheus metrics every service exposes on /metrics (one registry per process)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

HTTP_SECONDS = Histogram(
    "gpux_http_request_seconds",
    "HTTP request latency by route template and status.",
    ("method", "route", "status"),
)
HANDLER_SECONDS = Histogram(
    "gpux_handler_seconds",
    "Time to apply one consumed record (decode, transaction, after-commit step).",
    ("topic", "outcome"),
)
RECORDS = Counter(
    "gpux_records_total",
    "Consumed records by topic and outcome (applied, duplicate, skipped, failed).",
    ("topic", "outcome"),
)
SETTLEMENT_SECONDS = Histogram(
    "gpux_settlement_seconds",
    "Time of one settlement batch of running leases (billing).",
)
LEASE_EVENTS = Counter(
    "gpux_lease_events_total",
    "Lease settlements by event (settled: looked at by the settlement loop).",
    ("event",),
)
