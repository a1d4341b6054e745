"""Telemetry configured by the standard OTEL_* variables, the consumer-lag gauge, and the
metric families a service exposes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import TopicPartition
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind
from prometheus_client import CollectorRegistry, Counter, generate_latest

from gpux_platform import metrics
from gpux_platform.broker import observe_lag
from gpux_platform.metrics import CONSUMER_LAG, ServiceMetrics
from gpux_platform.settings import GpuxSettings
from gpux_platform.telemetry import make_tracer_provider, records, trace_exporter

ENDPOINT = "http://collector.test:4318"


def test_no_exporter_without_an_otel_variable() -> None:
    provider = make_tracer_provider("billing", GpuxSettings(), environ={})
    assert provider.sampler is ALWAYS_OFF
    assert not records(provider)
    assert provider.resource.attributes["service.name"] == "gpux-billing"


def test_an_otlp_endpoint_alone_exports_over_otlp_and_samples_by_the_sdk() -> None:
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    exporter = trace_exporter(GpuxSettings(), environ)
    assert isinstance(exporter, OTLPSpanExporter)
    provider = make_tracer_provider("gateway", GpuxSettings(), environ=environ)
    assert records(provider)
    assert provider.resource.attributes["service.name"] == "gpux-gateway"


def test_otel_traces_exporter_names_the_exporter() -> None:
    console = trace_exporter(GpuxSettings(), {"OTEL_TRACES_EXPORTER": "console"})
    assert isinstance(console, ConsoleSpanExporter)
    none = {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert trace_exporter(GpuxSettings(), none) is None
    with pytest.raises(ValueError, match="OTEL_TRACES_EXPORTER"):
        trace_exporter(GpuxSettings(), {"OTEL_TRACES_EXPORTER": "zipkin"})


def test_otel_service_name_wins_over_the_services_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "exchange-billing")
    provider = make_tracer_provider(
        "billing", GpuxSettings(), environ={"OTEL_SERVICE_NAME": "exchange-billing"}
    )
    assert provider.resource.attributes["service.name"] == "exchange-billing"


def test_the_old_gpux_otel_settings_still_work_with_a_deprecation_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = GpuxSettings(otel_exporter="otlp", otel_endpoint=f"{ENDPOINT}/v1/traces")
    with pytest.deprecated_call(match="GPUX_OTEL_EXPORTER"):
        exporter = trace_exporter(old, {})
    assert isinstance(exporter, OTLPSpanExporter)
    assert exporter._endpoint == f"{ENDPOINT}/v1/traces"
    # A standard variable wins over the old setting.
    assert trace_exporter(old, {"OTEL_TRACES_EXPORTER": "none"}) is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:4318/t")  # read by it
    standard = trace_exporter(old, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://other:4318/t"})
    assert isinstance(standard, OTLPSpanExporter)
    assert standard._endpoint == "http://other:4318/t"


def test_a_processor_of_the_tests_records_without_an_exporter() -> None:
    spans = InMemorySpanExporter()
    provider = make_tracer_provider("t", GpuxSettings(), SimpleSpanProcessor(spans), environ={})
    with provider.get_tracer("t").start_as_current_span("work"):
        pass
    assert [s.name for s in spans.get_finished_spans()] == ["work"]


def test_a_client_span_outside_any_trace_is_not_recorded_but_one_inside_is() -> None:
    spans = InMemorySpanExporter()
    provider = make_tracer_provider("t", GpuxSettings(), SimpleSpanProcessor(spans), environ={})
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("SELECT", kind=SpanKind.CLIENT) as polled:
        assert not polled.is_recording()  # a relay's poll: no trace of its own every second
    with (
        tracer.start_as_current_span("POST /v1/orders", kind=SpanKind.SERVER),
        tracer.start_as_current_span("INSERT", kind=SpanKind.CLIENT) as statement,
    ):
        assert statement.is_recording()
    with tracer.start_as_current_span("orders.commands send", kind=SpanKind.PRODUCER) as sent:
        assert sent.is_recording()  # only clients are quiet at the root
    assert sorted(s.name for s in spans.get_finished_spans()) == [
        "INSERT",
        "POST /v1/orders",
        "orders.commands send",
    ]


def test_the_sampler_is_the_one_otel_traces_sampler_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    spans = InMemorySpanExporter()
    provider = make_tracer_provider("t", GpuxSettings(), SimpleSpanProcessor(spans), environ={})
    with provider.get_tracer("t").start_as_current_span("POST /v1/orders", kind=SpanKind.SERVER):
        pass
    assert spans.get_finished_spans() == ()
    assert "AlwaysOffSampler" in provider.sampler.get_description()


def test_a_service_exposes_the_families_it_uses_and_its_own() -> None:
    own = CollectorRegistry()
    Counter("gpux_unit_things_total", "Things of this service.", registry=own)
    billing = ServiceMetrics(own)
    billing.use((*metrics.HTTP, *metrics.SETTLEMENT, *metrics.SETTLEMENT))  # once each
    gateway = ServiceMetrics(CollectorRegistry())
    gateway.use(metrics.HTTP)
    billing_text = generate_latest(billing).decode()
    gateway_text = generate_latest(gateway).decode()
    assert "gpux_settlement_seconds" in billing_text
    assert "gpux_unit_things_total" in billing_text
    assert "gpux_http_request_seconds" in gateway_text
    assert "gpux_settlement_seconds" not in gateway_text
    assert "gpux_unit_things_total" not in gateway_text
    assert "gpux_consumer_lag" not in billing_text  # no consumers registered here


def message(consumer: Any, offset: int = 41) -> Any:
    record = SimpleNamespace(topic="unit.market.trades", partition=2, offset=offset)
    return SimpleNamespace(raw_message=record, consumer=consumer)


def lag() -> float:
    value: float = CONSUMER_LAG.labels("unit-group", "unit.market.trades", "2")._value.get()
    return value


def test_consumer_lag_is_the_high_watermark_after_the_record() -> None:
    class Consumer:
        _group_id = "unit-group"

        def highwater(self, tp: TopicPartition) -> int | None:
            assert tp == TopicPartition("unit.market.trades", 2)
            return 50

    observe_lag(message(Consumer()))
    assert lag() == 8  # offsets 42..49 are still to come
    observe_lag(message(Consumer(), offset=49))
    assert lag() == 0


def test_consumer_lag_is_left_alone_without_a_watermark_or_partition() -> None:
    class Unfetched:
        _group_id = "unit-group"

        def highwater(self, tp: TopicPartition) -> int | None:
            return None

    class Revoked:
        _group_id = "unit-group"

        def highwater(self, tp: TopicPartition) -> int | None:
            raise AssertionError("Partition is not assigned")

    observe_lag(message(Unfetched(), offset=49))
    observe_lag(message(Revoked(), offset=49))
    observe_lag(message(SimpleNamespace()))  # a test broker's fake consumer
    assert lag() == 0
