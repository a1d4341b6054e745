"""Domain → ``catalog.gpus`` / ``catalog.models`` payloads, published pipelined.

Event ids are derived from (topic, id, data version): publishing the same data version
again produces the same events, so a consumer that deduplicates on ``event_id`` sees one
event per item and version, and a compacted topic keeps the same latest value per key.
"""

from __future__ import annotations

from datetime import datetime

from faststream.kafka import KafkaBroker

from gpux_contracts.catalog import GpuFit, GpuPublished, ModelPublished
from gpux_contracts.events import wrap
from gpux_contracts.ids import stable_id
from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_estimator import GpuCatalog, GpuSpec, ModelArch, ModelCatalog, fit_for_gpu
from gpux_platform.broker import Outgoing, publish_many
from gpux_platform.settings import GpuxSettings

PRODUCER = "catalog"


def gpu_payload(gpu: GpuSpec, data_version: int) -> GpuPublished:
    """The published state of one GPU: its specs and the rule-of-thumb fit."""
    fit = fit_for_gpu(gpu)
    return GpuPublished(
        id=gpu.id,
        name=gpu.name,
        vendor=gpu.vendor,
        architecture=gpu.architecture,
        memory_gb=gpu.memory_gb,
        memory_type=gpu.memory_type,
        bandwidth_gb_s=gpu.bandwidth_gb_s,
        bf16_tflops=gpu.bf16_tflops,
        fp16_tflops=gpu.fp16_tflops,
        fp8_tflops=gpu.fp8_tflops,
        tdp_w=gpu.tdp_w,
        form_factor=gpu.form_factor,
        interconnect=gpu.interconnect,
        source=gpu.source,
        fit=GpuFit(
            qlora_b=fit.qlora_b,
            lora16_b=fit.lora16_b,
            full_b=fit.full_b,
            inference_fp16_b=fit.inference_fp16_b,
            inference_int8_b=fit.inference_int8_b,
            inference_int4_b=fit.inference_int4_b,
        ),
        data_version=data_version,
    )


def model_payload(model: ModelArch, data_version: int) -> ModelPublished:
    """The published state of one model architecture."""
    return ModelPublished(
        id=model.id,
        name=model.name,
        params_b=model.params_b,
        layers=model.layers,
        hidden=model.hidden,
        intermediate=model.intermediate,
        heads=model.heads,
        kv_heads=model.kv_heads,
        vocab=model.vocab,
        head_dim=model.head_dim,
        tied_embeddings=model.tied_embeddings,
        experts=model.experts,
        experts_per_token=model.experts_per_token,
        source=model.source,
        data_version=data_version,
    )


def gpu_messages(gpus: GpuCatalog, now: datetime) -> list[Outgoing]:
    """One ``gpu.published`` record per GPU, keyed by GPU id, in data-file order."""
    return [
        Outgoing(
            CATALOG_GPUS,
            gpu.id,
            wrap(
                gpu_payload(gpu, gpus.version),
                producer=PRODUCER,
                occurred_at=now,
                event_id=stable_id(CATALOG_GPUS.name, gpu.id, str(gpus.version)),
            ),
        )
        for gpu in gpus
    ]


def model_messages(models: ModelCatalog, now: datetime) -> list[Outgoing]:
    """One ``model.published`` record per model, keyed by model id, in data-file order."""
    return [
        Outgoing(
            CATALOG_MODELS,
            model.id,
            wrap(
                model_payload(model, models.version),
                producer=PRODUCER,
                occurred_at=now,
                event_id=stable_id(CATALOG_MODELS.name, model.id, str(models.version)),
            ),
        )
        for model in models
    ]


async def publish_catalog(
    broker: KafkaBroker,
    settings: GpuxSettings,
    gpus: GpuCatalog,
    models: ModelCatalog,
    now: datetime,
) -> int:
    """Publish every GPU and every model unconditionally; returns how many records."""
    messages = gpu_messages(gpus, now) + model_messages(models, now)
    await publish_many(broker, settings, messages)
    return len(messages)
