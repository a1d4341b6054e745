"""Domain → published payloads: every field carried over, fit from the rule, stable ids."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.domain.publication import gpu_payload, model_payload, needs_publish
from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_contracts.catalog import GpuPublished, ModelPublished
from gpux_contracts.events import EventCodec
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_estimator import fit_for_gpu
from gpux_platform.broker import encode

pytestmark = pytest.mark.unit

NOW = datetime(2025, 1, 1, tzinfo=UTC)
FIT_FIELDS = (
    "qlora_b", "lora16_b", "full_b", "inference_fp16_b", "inference_int8_b", "inference_int4_b",
)  # fmt: skip


def test_every_gpu_payload_carries_its_specs_and_the_rule_of_thumb_fit() -> None:
    gpus = load_gpu_catalog()
    for gpu in gpus:
        payload = gpu_payload(gpu, gpus.version)
        for field in dataclasses.fields(gpu):
            assert getattr(payload, field.name) == getattr(gpu, field.name), field.name
        fit = fit_for_gpu(gpu)
        assert {f: getattr(payload.fit, f) for f in FIT_FIELDS} == {
            f: getattr(fit, f) for f in FIT_FIELDS
        }
        assert payload.data_version == gpus.version


def test_rtx_4090_fit_is_the_reference_pages() -> None:
    payload = gpu_payload(load_gpu_catalog().get("rtx-4090"), 1)
    assert (payload.fit.qlora_b, payload.fit.lora16_b) == (15, 7)


def test_every_model_payload_carries_every_field_the_estimator_needs() -> None:
    models = load_model_catalog()
    for model in models:
        payload = model_payload(model, models.version)
        for field in dataclasses.fields(model):
            if field.name != "custom":  # catalog models are never custom
                assert getattr(payload, field.name) == getattr(model, field.name), field.name


def test_records_are_keyed_by_id_on_their_topics_and_decode() -> None:
    gpus, models = load_gpu_catalog(), load_model_catalog()
    codec: EventCodec[GpuPublished | ModelPublished] = EventCodec(GpuPublished, ModelPublished)
    gpu_records = gpu_messages(gpus, NOW)
    model_records = model_messages(models, NOW)
    assert [m.key for m in gpu_records] == list(gpus.ids)
    assert [m.key for m in model_records] == list(models.ids)
    assert {m.topic for m in gpu_records} == {CATALOG_GPUS}
    assert {m.topic for m in model_records} == {CATALOG_MODELS}
    for message in gpu_records + model_records:
        decoded = codec.decode(encode(message.envelope))
        assert decoded.payload == message.envelope.payload
        assert decoded.producer == "catalog"


def test_the_same_data_version_gives_the_same_event_ids() -> None:
    gpus = load_gpu_catalog()
    later = datetime(2026, 1, 1, tzinfo=UTC)
    first = [m.envelope.event_id for m in gpu_messages(gpus, NOW)]
    assert first == [m.envelope.event_id for m in gpu_messages(gpus, later)]
    bumped = dataclasses.replace(gpus, version=gpus.version + 1)
    assert set(first).isdisjoint(m.envelope.event_id for m in gpu_messages(bumped, NOW))


@pytest.mark.parametrize(
    ("last", "current", "expected"),
    [(None, 1, True), (1, 1, False), (1, 2, True), (2, 1, False)],
)
def test_only_new_or_newer_data_is_published(
    last: int | None, current: int, expected: bool
) -> None:
    assert needs_publish(last, current) is expected
