"""OpenTelemetry: one tracer provider per process; context crosses Kafka in headers."""

from __future__ import annotations

from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from gpux_common.events import TraceContext
from gpux_common.settings import GpuxSettings


def make_tracer_provider(
    service: str, settings: GpuxSettings, extra: SpanProcessor | None = None
) -> TracerProvider:
    """A tracer provider with the exporter the settings name (none, console or OTLP)."""
    provider = TracerProvider(resource=Resource.create({"service.name": f"gpux-{service}"}))
    exporter: SpanExporter | None = None
    if settings.otel_exporter == "console":
        exporter = ConsoleSpanExporter()
    elif settings.otel_exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.otel_endpoint)
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
