"""The catalog's published state: every GPU model and every model architecture (compacted).

Produced by the catalog service on ``catalog.gpus`` and ``catalog.models`` (key = the id);
other services rebuild their view of the catalog from these topics alone. Sizes in GB and
throughputs in TFLOP/s are floats: they are datasheet figures, not money.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field, StringConstraints

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload

CatalogId = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$", max_length=64)
]
"""A catalog slug such as ``rtx-4090`` or ``llama-3.1-8b``."""

Text = Annotated[str, StringConstraints(min_length=1, max_length=200)]
"""A non-empty label."""

Citation = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
"""Where figures come from: a document's title and URL."""

PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""A finite, strictly positive figure."""

Billions = Annotated[int, Field(ge=0)]
"""A model size in whole billions of parameters."""


class GpuFit(FrozenModel):
    """Rule-of-thumb fit: the largest base model (billions of parameters) per method."""

    qlora_b: Billions = Field(description="QLoRA, 4-bit base model.")
    lora16_b: Billions = Field(description="LoRA on a 16-bit base model.")
    full_b: Billions = Field(description="Full fine-tuning, mixed precision with AdamW.")
    inference_fp16_b: Billions = Field(description="Inference with 16-bit weights.")
    inference_int8_b: Billions = Field(description="Inference with 8-bit weights.")
    inference_int4_b: Billions = Field(description="Inference with 4-bit weights.")


class GpuPublished(Payload):
    """One GPU model's datasheet figures and rule-of-thumb fit (latest state per GPU id)."""

    event_type: ClassVar[str] = "gpu.published"
    schema_version: ClassVar[int] = 1

    id: CatalogId = Field(description="Catalog id, e.g. `rtx-4090`; the record's key.")
    name: Text = Field(description="Vendor name, e.g. `RTX 4090`.")
    vendor: Text = Field(description="Chip vendor, e.g. `NVIDIA`.")
    architecture: Text = Field(description="GPU architecture, e.g. `Ada Lovelace`.")
    memory_gb: PositiveFloat = Field(description="Memory capacity as the vendor states it.")
    memory_type: Text = Field(description="Memory technology, e.g. `GDDR6X`, `HBM3`.")
    bandwidth_gb_s: PositiveFloat = Field(description="Peak memory bandwidth, GB/s.")
    bf16_tflops: PositiveFloat = Field(description="Dense BF16 tensor TFLOP/s (no sparsity).")
    fp16_tflops: PositiveFloat = Field(description="Dense FP16 tensor TFLOP/s (no sparsity).")
    fp8_tflops: PositiveFloat | None = Field(
        default=None, description="Dense FP8 tensor TFLOP/s; null on chips without FP8."
    )
    tdp_w: int = Field(ge=1, description="Board power (TDP), watts.")
    form_factor: Text = Field(description="E.g. `PCIe, dual-slot` or `SXM5`.")
    interconnect: Text = Field(description="E.g. `PCIe 5.0 x16` or `NVLink 4`.")
    source: Citation = Field(description="Datasheet or whitepaper the figures come from.")
    fit: GpuFit = Field(description="Largest base model per method at 80 % of memory.")
    data_version: int = Field(ge=1, description="Version of the GPU data set this came from.")


class ModelPublished(Payload):
    """One open model's architecture, as the memory and time estimators need it."""

    event_type: ClassVar[str] = "model.published"
    schema_version: ClassVar[int] = 1

    id: CatalogId = Field(description="Catalog id, e.g. `llama-3.1-8b`; the record's key.")
    name: Text = Field(description="Display name, e.g. `Llama 3.1 8B`.")
    params_b: PositiveFloat = Field(description="Parameter count in billions (model card).")
    layers: int = Field(ge=1, description="Decoder layers (`num_hidden_layers`).")
    hidden: int = Field(ge=1, description="Hidden size.")
    intermediate: int = Field(ge=1, description="MLP intermediate size (per expert).")
    heads: int = Field(ge=1, description="Attention (query) heads.")
    kv_heads: int = Field(ge=1, description="Key/value heads (grouped-query attention).")
    vocab: int = Field(ge=1, description="Vocabulary size.")
    head_dim: int = Field(ge=1, description="Width of one attention head.")
    tied_embeddings: bool = Field(description="Whether the output head shares the embedding.")
    experts: int = Field(ge=1, description="MLP experts per layer (1: dense).")
    experts_per_token: int = Field(ge=1, description="Experts each token is routed to.")
    source: Citation = Field(description="Model card / config.json the shape comes from.")
    data_version: int = Field(ge=1, description="Version of the model data set this came from.")
