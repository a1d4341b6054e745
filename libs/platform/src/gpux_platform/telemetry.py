"""OpenTelemetry: one tracer provider per service, configured by the standard ``OTEL_*``
variables, and the instrumentation packages (FastAPI, asyncpg, aiokafka, redis).

- ``OTEL_TRACES_EXPORTER``: ``otlp`` (OTLP over HTTP/protobuf), ``console`` or ``none``. Unset:
  ``otlp`` when an OTLP endpoint is set, ``none`` otherwise (a developer's machine has no
  collector to send to).
- ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``/v1/traces`` is appended) or
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (used as is), ``OTEL_EXPORTER_OTLP_HEADERS``... are read
  by the exporter itself, ``OTEL_TRACES_SAMPLER``/``OTEL_TRACES_SAMPLER_ARG`` by the SDK's
  tracer provider, ``OTEL_RESOURCE_ATTRIBUTES`` by its resource.
- ``OTEL_SERVICE_NAME`` overrides the service's name, ``gpux-<name>`` by default.
- The old ``GPUX_OTEL_EXPORTER`` and ``GPUX_OTEL_ENDPOINT`` (the traces URL) are still read for
  one release, with a deprecation warning, when no standard variable says otherwise.

The FastAPI instrumentation is per app (each service's spans carry its own ``service.name``,
also when tests run several services in one process). asyncpg, aiokafka and redis are
instrumented by patching the libraries, once per process (``instrument_libraries``): a
service's own process instruments them with its provider.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal

from fastapi import FastAPI
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.aiokafka import AIOKafkaInstrumentor
from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.redis import RedisInstrumentor
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, get_current_span
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes
from starlette.types import ASGIApp, Receive, Scope, Send

from gpux_contracts.events import TraceContext
from gpux_platform.asgi import HttpMiddleware
from gpux_platform.settings import GpuxSettings

log = logging.getLogger("gpux.telemetry")

ExporterKind = Literal["none", "console", "otlp"]
EXPORTERS: tuple[ExporterKind, ...] = ("none", "console", "otlp")

UNTRACED_URLS = "/healthz,/readyz,/metrics"
"""Probes and scrapes: a span each would drown the traces that matter."""

OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")

LIBRARIES = (AsyncPGInstrumentor, AIOKafkaInstrumentor, RedisInstrumentor)
"""The instrumentation packages that patch a library for the whole process."""


def deprecated(old: str, new: str) -> None:
    """Warn once per use that a ``GPUX_OTEL_*`` setting gave way to a standard variable."""
    message = f"{old} is deprecated and will be removed in the next release; use {new}"
    warnings.warn(message, DeprecationWarning, stacklevel=3)
    log.warning(message)


def trace_exporter(
    settings: GpuxSettings, environ: Mapping[str, str] = os.environ
) -> SpanExporter | None:
    """The span exporter the ``OTEL_*`` variables (or the deprecated settings) name, if any."""
    kind = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    endpoint: str | None = None
    if not kind and settings.otel_exporter is not None:
        deprecated("GPUX_OTEL_EXPORTER", "OTEL_TRACES_EXPORTER")
        kind = settings.otel_exporter
    standard_endpoint = any(environ.get(name) for name in OTLP_ENDPOINTS)
    if kind in {"", "otlp"} and not standard_endpoint and settings.otel_endpoint:
        deprecated("GPUX_OTEL_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        endpoint = settings.otel_endpoint
    if not kind:
        kind = "otlp" if standard_endpoint or endpoint else "none"
    if kind not in EXPORTERS:
        raise ValueError(f"OTEL_TRACES_EXPORTER: {kind!r} is none of {', '.join(EXPORTERS)}")
    if kind == "console":
        return ConsoleSpanExporter()
    if kind == "otlp":
        return OTLPSpanExporter(endpoint=endpoint)  # None: the exporter reads OTEL_EXPORTER_OTLP_*
    return None


class QuietRootClients(Sampler):
    """The SDK's sampler (``OTEL_TRACES_SAMPLER``), except that a client span outside any trace
    is not recorded: the statements and Redis calls of background loops (an outbox relay's
    polls, a LISTEN, a lag reading) would each be a trace of their own, every second."""

    def __init__(self, sampler: Sampler) -> None:
        self._sampler = sampler

    def should_sample(  # noqa: PLR0917 - the SDK's Sampler signature
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        parent = get_current_span(parent_context).get_span_context()
        if kind is SpanKind.CLIENT and not parent.is_valid:
            return SamplingResult(Decision.DROP)
        return self._sampler.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )

    def get_description(self) -> str:
        return f"QuietRootClients{{{self._sampler.get_description()}}}"


def env_sampler() -> Sampler:
    """The sampler ``OTEL_TRACES_SAMPLER`` (and ``_ARG``) name, as the SDK reads them."""
    return TracerProvider(shutdown_on_exit=False).sampler


def make_tracer_provider(
    service: str,
    settings: GpuxSettings,
    extra: SpanProcessor | None = None,
    environ: Mapping[str, str] = os.environ,
) -> TracerProvider:
    """The service's tracer provider: its ``service.name``, the exporter the environment names,
    and the sampler ``OTEL_TRACES_SAMPLER`` names (parent-based always-on by default; client
    spans outside any trace are not recorded, ``QuietRootClients``).

    With no exporter and no ``extra`` processor nothing would ever read a span, so none is
    recorded (``ALWAYS_OFF``): trace ids are still made and propagated (envelopes, logs), but a
    span costs an id instead of attributes, events and a context per record and request.
    """
    exporter = trace_exporter(settings, environ)
    attributes = {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: f"gpux-{service}"}
    provider = TracerProvider(
        resource=Resource.create(attributes),
        sampler=ALWAYS_OFF
        if exporter is None and extra is None
        else QuietRootClients(env_sampler()),
    )
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    if extra is not None:
        provider.add_span_processor(extra)
    return provider


def records(provider: TracerProvider) -> bool:
    """Whether the provider records spans at all (an exporter or a processor reads them)."""
    return provider.sampler is not ALWAYS_OFF


def install_tracer_provider(provider: TracerProvider) -> None:
    """Make the provider global (once per process; later calls are ignored by OpenTelemetry)."""
    trace.set_tracer_provider(provider)


def instrument_libraries(provider: TracerProvider) -> None:
    """Instrument asyncpg (a client span per statement), aiokafka (``<topic> send`` and
    ``<topic> receive``, the trace context in the record's headers) and redis for the whole
    process, their spans going to ``provider``. Does nothing for a library already
    instrumented; ``uninstrument_libraries`` undoes it."""
    for instrumentor in LIBRARIES:
        if not instrumentor().is_instrumented_by_opentelemetry:
            instrumentor().instrument(tracer_provider=provider)


def uninstrument_libraries() -> None:
    """Remove the process-wide instrumentation ``instrument_libraries`` added."""
    for instrumentor in LIBRARIES:
        if instrumentor().is_instrumented_by_opentelemetry:
            instrumentor().uninstrument()


def kafka_instrumented() -> bool:
    """Whether aiokafka's sends carry their own span's context (``instrument_libraries``)."""
    return bool(AIOKafkaInstrumentor().is_instrumented_by_opentelemetry)


class TraceIds(HttpMiddleware):
    """ASGI middleware for a provider that records nothing: each request still runs in a
    (non-recording) span of the caller's trace, or of a new one, so the envelopes it writes and
    its log lines carry trace ids, at the cost of an id instead of the instrumentation's
    attributes per request."""

    def __init__(self, app: ASGIApp, provider: TracerProvider) -> None:
        super().__init__(app)
        self.tracer = provider.get_tracer("gpux.http")

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request in its span."""
        # The first of repeated headers wins, as in Starlette's ``Headers``.
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(scope["headers"])}
        span = self.tracer.start_span("HTTP", propagate.extract(carrier), SpanKind.SERVER)
        with trace.use_span(span, end_on_exit=True):
            await self.app(scope, receive, send)


def instrument_app(app: FastAPI, provider: TracerProvider) -> None:
    """A server span per HTTP request, named by its route template (``GET /v1/orders/{id}``)
    and continuing the caller's trace (``traceparent``); probes and ``/metrics`` untraced.
    Where the provider records nothing, only the trace ids are carried (``TraceIds``)."""
    if not records(provider):
        app.add_middleware(TraceIds, provider=provider)
        return
    FastAPIInstrumentor.instrument_app(
        app,
        tracer_provider=provider,
        excluded_urls=UNTRACED_URLS,
        exclude_spans=["receive", "send"],  # no span per ASGI message
    )


def current_trace() -> TraceContext | None:
    """The active span's W3C context, to store in an envelope."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return TraceContext.from_carrier(carrier)
