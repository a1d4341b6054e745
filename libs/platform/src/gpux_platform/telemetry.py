"""OpenTelemetry: one tracer provider per process; context crosses Kafka in headers."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import asyncpg
from asyncpg.connection import LoggedQuery
from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, Status, StatusCode

from gpux_contracts.events import TraceContext
from gpux_platform.settings import GpuxSettings


def make_tracer_provider(
    service: str, settings: GpuxSettings, extra: SpanProcessor | None = None
) -> TracerProvider:
    """A tracer provider with the exporter the settings name (none, console or OTLP).

    With no exporter and no ``extra`` processor nothing would ever read a span, so none is
    recorded (``ALWAYS_OFF``): trace ids are still made and propagated (envelopes, logs), but a
    span costs an id instead of attributes, events and a context per record and request.
    """
    exporter: SpanExporter | None = None
    if settings.otel_exporter == "console":
        exporter = ConsoleSpanExporter()
    elif settings.otel_exporter == "otlp":
        exporter = OTLPSpanExporter(endpoint=settings.otel_endpoint)
    provider = TracerProvider(
        resource=Resource.create({"service.name": f"gpux-{service}"}),
        sampler=ALWAYS_OFF if exporter is None and extra is None else None,
    )
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    if extra is not None:
        provider.add_span_processor(extra)
    return provider


def install_tracer_provider(provider: TracerProvider) -> None:
    """Make the provider global (once per process; later calls are ignored by OpenTelemetry)."""
    trace.set_tracer_provider(provider)


def current_trace() -> TraceContext | None:
    """The active span's W3C context, to store in an envelope."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return TraceContext.from_carrier(carrier)


def trace_queries(provider: TracerProvider) -> Callable[[asyncpg.Connection], Awaitable[None]]:
    """A pool ``init`` that records each SQL statement as a client span of the current trace.

    asyncpg's query logger, not a global instrumentor: the span belongs to the provider of
    the service that owns the pool, even when several services share a process (tests).
    Statements outside any trace (relay polls, LISTEN) are not recorded.
    """
    tracer = provider.get_tracer("gpux.db")

    def record(query: LoggedQuery) -> None:
        # asyncpg calls this with call_soon, which runs it in a copy of the query's context.
        if not trace.get_current_span().get_span_context().is_valid:
            return
        ended = time.time_ns()
        operation = query.query.lstrip().split(None, 1)[0].upper() if query.query.strip() else ""
        span = tracer.start_span(
            operation or "SQL",
            kind=SpanKind.CLIENT,
            start_time=ended - int(query.elapsed * 1e9),
            attributes={
                "db.system.name": "postgresql",
                "db.namespace": str(getattr(query.conn_params, "database", "") or ""),
                "db.operation.name": operation,
                "db.query.text": query.query,
            },
        )
        if query.exception is not None:
            span.set_status(Status(StatusCode.ERROR, type(query.exception).__name__))
        span.end(end_time=ended)

    async def init(conn: asyncpg.Connection) -> None:
        conn.add_query_logger(record)

    return init
