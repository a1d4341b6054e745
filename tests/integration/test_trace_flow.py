"""One order, one trace: gateway, billing, matching and pricing spans share the request's id.

Every service runs in-process with a tracer provider of its own (its own ``service.name``)
that exports to one in-memory exporter; the libraries the instrumentation packages patch for
a whole process (asyncpg, aiokafka, redis) report to one more provider, the process's. A
buyer's market order fills against a live offer through the REST API; the spans of the
``POST /v1/orders`` request (the FastAPI instrumentation's, named by route template), its
SQL (asyncpg's), the Kafka sends and receives of every hop (aiokafka's), the hold in billing,
the match, the trade in pricing and the lease in billing must form one tree under that
request. Each service's ``/metrics`` exposes its own families: latency histograms, consumer
lag read from the broker, the outbox backlog and the published-event counters. Last, the
gateway as a process of its own, configured by the standard ``OTEL_*`` variables.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_contracts.leases import LeaseCharged
from gpux_contracts.orders import OrderPlaced, TradeExecuted
from gpux_contracts.topics import BILLING_LEASES, MARKET_TRADES, ORDERS_BOOK, ORDERS_COMMANDS, Topic
from gpux_devinfra.testing.http import account, auth, dev_top_up, offer_body, push_offer
from gpux_devinfra.testing.http import get_until as until
from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_devinfra.testing.services import IN_TESTS, stack
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.service import ServiceSpec
from gpux_platform.settings import GpuxSettings
from gpux_platform.telemetry import (
    instrument_libraries,
    make_tracer_provider,
    uninstrument_libraries,
)
from gpux_pricing.bootstrap import SPEC as PRICING

# The stack's test settings, but matching keeps its default expiry interval (nothing expires
# here).
OVERRIDES: dict[str, dict[str, Any]] = {
    name: dict(values) for name, values in IN_TESTS.items() if name != MATCHING.name
}


@dataclass
class Market:
    """The gateway's client, billing's URL and the spans every service exported."""

    client: httpx.AsyncClient
    billing_url: str
    spans: InMemorySpanExporter


@pytest.fixture(scope="module")
async def market(module_settings: GpuxSettings) -> AsyncIterator[Market]:
    spans = InMemorySpanExporter()

    def traced(spec: ServiceSpec) -> TracerProvider:
        return make_tracer_provider(spec.name, module_settings, SimpleSpanProcessor(spans))

    # In a service's own process the libraries report to its provider (``service.serve``);
    # here five services share one process, so they report to the process's.
    process = make_tracer_provider(PROCESS, module_settings, SimpleSpanProcessor(spans))
    instrument_libraries(process)
    services = (CATALOG, PRICING, MATCHING, BILLING, GATEWAY)
    try:
        async with (
            stack(
                module_settings, *services, overrides=OVERRIDES, tracer_provider=traced
            ) as served,
            served["gateway"].client() as client,
        ):
            yield Market(client, served["billing"].url, spans)
    finally:
        uninstrument_libraries()
        process.shutdown()


PROCESS = "tests"
"""The name of the provider of the process-wide instrumented libraries (``gpux-tests``)."""


def service(span: ReadableSpan) -> str:
    return str(span.resource.attributes["service.name"])


def consumed(spans: Sequence[ReadableSpan], who: str, topic: Topic) -> list[ReadableSpan]:
    """The consumer spans of a service processing records of a topic."""
    return [
        s
        for s in spans
        if service(s) == f"gpux-{who}"
        and s.kind is SpanKind.CONSUMER
        and s.name.endswith(f"{topic.name} process")
    ]


def unit_sql(spans: Sequence[ReadableSpan], who: str, topic: Topic) -> list[str]:
    """The SQL a service ran for a topic's records in this trace: under each record's consumer
    span (its handler) and under the span of the unit of work that applied the batch (its
    claim, the batch's set-based reads and the commit's writes)."""
    units = [s for s in spans if service(s) == f"gpux-{who}" and s.name == f"{topic.name} batch"]
    return [q for span in [*consumed(spans, who, topic), *units] for q in db_calls(spans, span)]


def under(spans: Sequence[ReadableSpan], root: ReadableSpan) -> list[ReadableSpan]:
    """The spans whose parent chain reaches ``root`` (root included)."""
    by_id = {s.context.span_id: s for s in spans}
    found = []
    for span in spans:
        node: ReadableSpan | None = span
        while node is not None and node.context.span_id != root.context.span_id:
            node = by_id.get(node.parent.span_id) if node.parent else None
        if node is not None:
            found.append(span)
    return found


def db_calls(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[str]:
    """The SQL statements run under one span."""
    return [str((s.attributes or {})["db.statement"]) for s in under(spans, parent) if is_sql(s)]


async def test_one_trace_from_the_order_to_the_lease(market: Market) -> None:
    await a_market_order_fills_and_opens_a_lease(market.client)
    request = the_order_request(market)
    spans = await the_whole_trace(market, request)
    summary = sorted(f"{service(s)}: {s.name}" for s in spans if s.kind is not SpanKind.CLIENT)
    # One tree: every span descends from the request.
    assert len(under(spans, request)) == len(spans), orphans(spans, request)
    assert {service(s) for s in spans} >= {
        "gpux-gateway",
        "gpux-billing",
        "gpux-matching",
        "gpux-pricing",
    }, summary

    hold = consumed(spans, "billing", ORDERS_COMMANDS)
    match = consumed(spans, "matching", ORDERS_BOOK)
    trade_in_pricing = consumed(spans, "pricing", MARKET_TRADES)
    lease_opening = consumed(spans, "billing", MARKET_TRADES)
    lease_view = consumed(spans, "gateway", BILLING_LEASES)
    fills_view = consumed(spans, "gateway", MARKET_TRADES)
    for name, found in [
        ("billing holds the order", hold),
        ("matching matches it", match),
        ("pricing records the trade", trade_in_pricing),
        ("billing opens the lease", lease_opening),
        ("the gateway shows the lease", lease_view),
        ("the gateway shows the fill", fills_view),
    ]:
        assert found, (name, summary)

    # Handlers and their units of work run their SQL in the trace.
    assert db_calls(spans, request), "the gateway's INSERT of the order"
    holding = unit_sql(spans, "billing", ORDERS_COMMANDS)
    assert any("holds" in q for q in holding), holding
    opening = unit_sql(spans, "billing", MARKET_TRADES)
    assert any("leases" in q for q in opening), opening
    recording = unit_sql(spans, "pricing", MARKET_TRADES)
    assert any("trades" in q for q in recording), recording
    matching = unit_sql(spans, "matching", ORDERS_BOOK)
    assert any("commands" in q for q in matching), matching
    assert all(s.kind is SpanKind.CLIENT and s.name.isupper() for s in spans if is_sql(s))

    # Every hop went through Kafka in the trace: sent by the outbox (aiokafka's send span,
    # whose context the record carries) and received by the consumer (aiokafka's receive).
    for topic in (ORDERS_COMMANDS, ORDERS_BOOK, MARKET_TRADES, BILLING_LEASES):
        sent = kafka(spans, "send", topic)
        received = kafka(spans, "receive", topic)
        assert sent, (topic.name, summary)
        assert all(s.kind is SpanKind.PRODUCER for s in sent)
        assert received, (topic.name, summary)
        assert all(
            r.parent and r.parent.span_id in {s.context.span_id for s in sent} for r in received
        )
    assert service(kafka(spans, "send", ORDERS_COMMANDS)[0]) == f"gpux-{PROCESS}"
    # The read models' Redis calls are in the trace too (redis's instrumentation).
    assert any(scope(s) == "opentelemetry.instrumentation.redis" for s in spans), summary


async def test_http_server_spans_are_named_by_route_template(market: Market) -> None:
    # Runs after the order above (same module), whose status was polled by its id.
    names = {
        s.name
        for s in market.spans.get_finished_spans()
        if s.kind is SpanKind.SERVER and service(s) == "gpux-gateway"
    }
    assert "GET /v1/orders/{order_id}" in names, names
    assert not [n for n in names if re.search(r"/v1/orders/ord_", n)], names
    assert not [n for n in names if "/readyz" in n or "/metrics" in n], names


async def a_market_order_fills_and_opens_a_lease(client: httpx.AsyncClient) -> None:
    """A live offer, a funded buyer, and its market order: filled, one lease."""
    seller = await account(client, "seller")
    buyer = await account(client, "buyer")
    made = await push_offer(client, seller, offer_body("0.30", "EUR", 2))
    live = await until(
        client, f"/v1/offers/{made['id']}", lambda b: b["status"] == "live", key=seller
    )
    assert live["status"] == "live", live
    await dev_top_up(client, buyer, "100.00", "EUR")

    order = {
        "gpu": "rtx-4090",
        "currency": "EUR",
        "tier": "on_demand",
        "hours": 1,
        "gpus": 2,
        "type": "market",
        "max_price_per_gpu_hour": "0.50",
        "time_in_force": "ioc",
    }
    placed = await client.post("/v1/orders", json=order, headers=auth(buyer))
    assert placed.status_code == 202, placed.text
    order_id = placed.json()["id"]
    filled = await until(
        client, f"/v1/orders/{order_id}", lambda b: b["status"] == "filled", key=buyer
    )
    assert filled["status"] == "filled", filled
    leases = await until(client, "/v1/leases", lambda b: len(b["items"]) == 1, key=buyer)
    assert len(leases["items"]) == 1, leases


def status_of(span: ReadableSpan) -> object:
    """The response's status code on an HTTP server span (the instrumentation's attribute;
    ``http.response.status_code`` once OTEL_SEMCONV_STABILITY_OPT_IN=http asks for it)."""
    attributes = span.attributes or {}
    return attributes.get("http.status_code", attributes.get("http.response.status_code"))


def the_order_request(market: Market) -> ReadableSpan:
    """The gateway's one server span of the accepted ``POST /v1/orders``."""
    requests = [
        s
        for s in market.spans.get_finished_spans()
        if s.kind is SpanKind.SERVER and s.name == "POST /v1/orders" and status_of(s) == 202
    ]
    assert len(requests) == 1, [s.name for s in requests]
    request = requests[0]
    assert service(request) == "gpux-gateway"
    return request


async def the_whole_trace(market: Market, request: ReadableSpan) -> list[ReadableSpan]:
    """The spans of the request's trace, once its last hops arrived and each one's parents."""
    trace_id = request.context.trace_id

    def in_trace() -> list[ReadableSpan]:
        return [s for s in market.spans.get_finished_spans() if s.context.trace_id == trace_id]

    # The last hops (the lease's read model in the gateway) may still be on their way.
    await eventually(
        lambda: consumed(in_trace(), "gateway", BILLING_LEASES),
        what="the gateway's lease view in the trace",
        timeout_s=15,
        interval_s=0.1,
    )
    # A span is exported when it ends, its parent only later: wait until every span seen so
    # far has its whole parent chain (a span that never joins the tree fails the test).
    await eventually(
        lambda: orphans(in_trace(), request),
        lambda found: not found,
        what="every span to join the request's tree",
        timeout_s=10,
        interval_s=0.1,
    )
    return in_trace()


def orphans(spans: Sequence[ReadableSpan], root: ReadableSpan) -> list[str]:
    """The spans that do not descend from ``root``, by service and name."""
    tree = under(spans, root)
    return sorted(f"{service(s)}: {s.name}" for s in spans if s not in tree)


def is_sql(span: ReadableSpan) -> bool:
    """A statement's span, as the asyncpg instrumentation makes it."""
    return scope(span) == "opentelemetry.instrumentation.asyncpg" and "db.statement" in (
        span.attributes or {}
    )


def scope(span: ReadableSpan) -> str:
    """The instrumentation library that made the span."""
    return span.instrumentation_scope.name if span.instrumentation_scope else ""


def kafka(spans: Sequence[ReadableSpan], operation: str, topic: Topic) -> list[ReadableSpan]:
    """The aiokafka instrumentation's ``<topic> send`` or ``<topic> receive`` spans."""
    return [
        s
        for s in spans
        if scope(s) == "opentelemetry.instrumentation.aiokafka"
        and s.name.endswith(f"{topic.name} {operation}")
    ]


async def test_metrics_expose_latency_lag_and_business_counters(market: Market) -> None:
    # Runs after the order above (same module). Each service registers the families it uses;
    # the services share this process, so a family two of them use holds both's series.
    async with httpx.AsyncClient(timeout=30) as plain:
        billing = (await plain.get(f"{market.billing_url}/metrics")).text
    gateway = (await market.client.get("/metrics")).text
    trades = re.escape(MARKET_TRADES.name)
    for text in (gateway, billing):
        assert re.search(r'gpux_http_request_seconds_bucket\{.*route="/v1/orders"', text)
        assert re.search(rf'gpux_handler_seconds_bucket\{{.*topic="{trades}"', text)
        lag = rf'gpux_consumer_lag\{{group="\S+",partition="\d+",topic="\S+{trades}"\}} \d'
        assert re.search(lag, text)
        assert re.search(r'gpux_outbox_backlog\{schema="\w+"\} \d', text)
        assert re.search(r'gpux_outbox_oldest_age_seconds\{schema="\w+"\} \d', text)
        for event_type in (e.event_type for e in (OrderPlaced, TradeExecuted, LeaseCharged)):
            pattern = rf'gpux_events_published_total\{{event_type="{event_type}",[^}}]*\}} [1-9]'
            assert re.search(pattern, text), event_type
    # Billing's settlement families are billing's alone.
    assert "# TYPE gpux_settlement_seconds histogram" in billing
    assert "gpux_settlement_seconds" not in gateway


async def console_export(path: Path) -> str:
    """The gateway process's console export once it holds the request's span by route
    template, asyncpg's spans of the order's lookup, and aiokafka's of the sign-up's events,
    which the outbox relay sends a moment later (each batch of spans is exported as it ends,
    so they may come in any order; a loaded box, the whole suite beside it, may take long)."""

    def exported() -> str:
        return path.read_text(errors="replace")

    expected = (
        r'"name": "GET /v1/orders/\{order_id\}"',
        r'"db.statement": "SELECT [^"]*gateway\.orders',
        r'"name": "\S+gateway\.accounts send"',
        r'"name": "\S+gateway\.accounts receive"',
    )
    try:
        return await eventually(
            exported,
            lambda log: all(re.search(pattern, log) for pattern in expected),
            what="the request's, asyncpg's and aiokafka's spans in the console export",
            timeout_s=90,
        )
    except AssertionError:
        names = sorted(set(re.findall(r'"name": "([^"]+)"', exported())))
        absent = [p for p in expected if not re.search(p, exported())]
        raise AssertionError(f"missing {absent}; exported span names: {names}") from None


async def test_a_service_process_traces_by_the_otel_variables_and_shows_its_own_families(
    own_settings: GpuxSettings, tmp_path: Path
) -> None:
    """The gateway as a process of its own: the standard variables configure its exporter
    (console, to its log), the instrumentation packages report with its provider, and its
    ``/metrics`` shows the families it uses, not billing's. Its database is its own: on the
    session's, the in-process gateway's outbox relay (another test's fixture) sends some of its
    events, and their ``send`` spans go to that process's provider, not to this log."""
    env = {
        **service_env(own_settings, connect_timeout_s=3),
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    gateway = ServiceProcess("gpux_gateway", env, tmp_path / "gateway.log")
    gateway.start()
    try:
        await gateway.ready(timeout_s=60)
        async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as client:
            key = await account(client, "buyer")
            missing = await client.get("/v1/orders/ord_nothing", headers=auth(key))
            assert missing.status_code == 404, missing.text

            async def scraped() -> str:
                return (await client.get("/metrics")).text

            # Its consumer groups' lag, read from the broker within seconds of the start.
            metrics = await eventually(
                scraped,
                lambda text: re.search(r'gpux_consumer_lag\{group="[^"]+gateway\.', text),
                what="the gateway's groups' lag on /metrics",
            )

        log = await console_export(gateway.log_path)
        assert '"service.name": "gpux-gateway"' in log
        assert not re.search(r'"name": "[^"]*ord_nothing', log)  # never the raw path
    finally:
        gateway.terminate()
        assert gateway.proc is not None
        assert gateway.proc.wait(timeout=30) is not None, gateway.tail()
    assert "gpux_http_request_seconds" in metrics
    assert "# TYPE gpux_outbox_backlog gauge" in metrics
    assert "gpux_settlement_seconds" not in metrics  # billing's
