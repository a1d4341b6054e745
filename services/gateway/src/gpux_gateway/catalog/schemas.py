"""Bodies of the catalog endpoints: public market data and the fine-tuning estimator.

Bounds come from the catalog domain's own constants, so the API and the estimator agree.
Memory figures are GiB (2**30 bytes), as the estimator computes them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from gpux_contracts.catalog import CatalogId, GpuPublished, ModelPublished
from gpux_contracts.money import Currency, DecimalAmount
from gpux_estimator import Method, Optimizer, TargetModules
from gpux_estimator.estimator import MAX_GPUS, MAX_LORA_RANK, MAX_MICRO_BATCH, MAX_SEQ_LEN
from gpux_estimator.jobs import MAX_AVG_TOKENS, MAX_EPOCHS, MAX_EXAMPLES
from gpux_estimator.models import CUSTOM_MAX_PARAMS_B, CUSTOM_MIN_PARAMS_B
from gpux_gateway.entrypoints.schemas import examples, listing

# The examples of the answers below are the gateway's own for the bundled catalog (data version
# 1), with best asks of 2.49 USD (h100-sxm), 1.59 (a100-sxm-80gb) and 0.39 (rtx-4090).


class TierAsk(BaseModel):
    """The best live price per GPU-hour of one tier, like the reference page's 'ab …'."""

    price: DecimalAmount
    currency: Currency
    gpus: int = Field(description="GPUs available at that price.")


class GpuOut(GpuPublished):
    """One GPU model as the catalog publishes it, with its best live ask per tier."""

    model_config = examples(
        {
            "id": "h100-sxm",
            "name": "H100 SXM",
            "vendor": "NVIDIA",
            "architecture": "Hopper",
            "memory_gb": 80.0,
            "memory_type": "HBM3",
            "bandwidth_gb_s": 3350.0,
            "bf16_tflops": 989.4,
            "fp16_tflops": 989.4,
            "fp8_tflops": 1978.9,
            "tdp_w": 700,
            "form_factor": "SXM5",
            "interconnect": "NVLink 4 (900 GB/s)",
            "source": "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM), "
            "https://www.nvidia.com/en-us/data-center/h100/",
            "fit": {
                "qlora_b": 60,
                "lora16_b": 25,
                "full_b": 4,
                "inference_fp16_b": 25,
                "inference_int8_b": 50,
                "inference_int4_b": 105,
            },
            "data_version": 1,
            "best_ask": {
                "on_demand": {"price": "2.49", "currency": "USD", "gpus": 8},
                "interruptible": {"price": "1.79", "currency": "USD", "gpus": 16},
            },
        }
    )

    best_ask: dict[str, TierAsk] = Field(
        default_factory=dict,
        description="Best live offer per tier (`on_demand`, `interruptible`); a tier with no"
        " offer is absent.",
    )


class GpuList(BaseModel):
    """Every GPU model, by memory then bandwidth, with its best ask per tier."""

    model_config = listing(GpuOut)

    items: list[GpuOut]


class ModelOut(ModelPublished):
    """An open model's architecture (its config.json) as the catalog publishes it."""

    model_config = examples(
        {
            "id": "llama-3.1-8b",
            "name": "Llama 3.1 8B",
            "params_b": 8.03,
            "layers": 32,
            "hidden": 4096,
            "intermediate": 14336,
            "heads": 32,
            "kv_heads": 8,
            "vocab": 128256,
            "head_dim": 128,
            "tied_embeddings": False,
            "experts": 1,
            "experts_per_token": 1,
            "source": "https://huggingface.co/meta-llama/Llama-3.1-8B (model card: 8B; "
            "config.json)",
            "data_version": 1,
        }
    )


class ModelList(BaseModel):
    """Every model the estimator knows by name, smallest first."""

    model_config = listing(ModelOut)

    items: list[ModelOut]


class DatasetIn(BaseModel):
    """A fine-tuning dataset: examples x average tokens x epochs."""

    model_config = ConfigDict(extra="forbid")

    examples: int = Field(ge=1, le=MAX_EXAMPLES)
    avg_tokens: int = Field(ge=1, le=MAX_AVG_TOKENS, description="Average tokens per example.")
    epochs: float = Field(default=1.0, gt=0, le=MAX_EPOCHS, allow_inf_nan=False)


class EstimateSettings(BaseModel):
    """How to fine-tune: method, shapes, optimizer, GPUs, and optionally the dataset."""

    model_config = ConfigDict(extra="forbid")

    method: Method
    seq_len: int = Field(default=2048, ge=1, le=MAX_SEQ_LEN)
    micro_batch: int = Field(default=1, ge=1, le=MAX_MICRO_BATCH)
    lora_rank: int = Field(default=16, ge=1, le=MAX_LORA_RANK, description="LoRA and QLoRA.")
    target_modules: TargetModules = TargetModules.ALL_LINEAR
    gradient_checkpointing: bool = True
    optimizer: Optimizer = Optimizer.ADAMW_32BIT
    num_gpus: int = Field(default=1, ge=1, le=MAX_GPUS, description="ZeRO-3/FSDP sharding.")
    fused_loss: bool = Field(default=False, description="Chunked or fused cross-entropy.")
    dataset: DatasetIn | None = Field(default=None, description="Adds job hours per GPU.")

    def training(self) -> dict[str, Any]:
        """The fields the domain's TrainingSettings takes."""
        return self.model_dump(exclude={"model", "params_b", "dataset"})


class EstimateForModel(EstimateSettings):
    """An estimate for a model of the catalog."""

    model_config = examples(
        {
            "model": "llama-3.1-8b",
            "method": "qlora",
            "dataset": {"examples": 20000, "avg_tokens": 512, "epochs": 2},
        }
    )

    model: CatalogId = Field(description="A model id from /v1/models.")


class EstimateForSize(EstimateSettings):
    """An estimate for any size: a Llama-like shape is derived from the parameter count."""

    model_config = examples({"params_b": 13, "method": "lora", "seq_len": 4096, "num_gpus": 2})

    params_b: float = Field(
        ge=CUSTOM_MIN_PARAMS_B,
        le=CUSTOM_MAX_PARAMS_B,
        allow_inf_nan=False,
        description="Parameters in billions.",
    )


def _variant(value: Any) -> str:
    # Picking the variant first keeps errors to the one the caller meant.
    if isinstance(value, dict) and "params_b" in value and "model" not in value:
        return "size"
    return "model"


# Exactly one of `model` and `params_b`: each variant refuses the other's field, so the
# rule is in the OpenAPI document too (oneOf), not only in code.
EstimateIn = Annotated[
    Annotated[EstimateForModel, Tag("model")] | Annotated[EstimateForSize, Tag("size")],
    Discriminator(_variant),
]


class ModelRef(BaseModel):
    """The model an estimate is for."""

    id: str
    name: str
    params_b: float
    custom: bool = Field(description="True when derived from `params_b`, not a catalog model.")


# The model the estimate's and the recommendations' examples are for.
_LLAMA_8B_REF = {"id": "llama-3.1-8b", "name": "Llama 3.1 8B", "params_b": 8.03, "custom": False}


class MemoryOut(BaseModel):
    """Estimated peak VRAM per GPU, GiB, by component."""

    weights_gb: float = Field(description="Base weights incl. quantisation constants.")
    adapters_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    overhead_gb: float = Field(description="CUDA context and allocator fragmentation.")
    total_gb: float
    trainable_params: int


class JobOut(BaseModel):
    """Wall-clock time of the job on `num_gpus` GPUs of one kind, and its cost at the best ask."""

    num_gpus: int
    hours: float = Field(description="Wall-clock hours, rounded up to 0.0001.")
    gpu_hours: float = Field(description="hours x num_gpus: what a lease would bill.")
    price_per_gpu_hour: DecimalAmount | None = Field(
        default=None, description="The tier's live best ask; null when nothing is offered."
    )
    cost: DecimalAmount | None = Field(
        default=None, description="gpu_hours x price, to the micro-unit; null without a price."
    )
    currency: Currency | None = None


class GpuCheck(BaseModel):
    """Whether one GPU holds the estimate, with its headroom."""

    gpu_id: str
    gpu_name: str
    memory_gb: float
    required_gb: float
    headroom_gb: float = Field(description="memory_gb - required_gb; negative: it does not fit.")
    headroom_pct: float
    fits: bool
    job: JobOut | None = Field(description="With a dataset and when the GPU fits; else null.")


class DatasetOut(BaseModel):
    """The dataset a job estimate is for."""

    examples: int
    avg_tokens: int
    epochs: float
    tokens: float = Field(description="examples x avg_tokens x epochs.")


_QLORA_8B_ON_80_GB: dict[str, Any] = {
    "memory_gb": 80.0,
    "required_gb": 11.81,
    "headroom_gb": 68.19,
    "headroom_pct": 85.2,
    "fits": True,
}
"""How the example's job (QLoRA of Llama 3.1 8B, 11.81 GB) fits any 80 GB GPU."""


class EstimateOut(BaseModel):
    """A VRAM breakdown and, for every GPU, whether it fits (most headroom first)."""

    model_config = examples(
        {
            "model": _LLAMA_8B_REF,
            "method": "qlora",
            "memory": {
                "weights_gb": 5.31,
                "adapters_gb": 0.16,
                "gradients_gb": 0.16,
                "optimizer_gb": 0.31,
                "activations_gb": 4.73,
                "overhead_gb": 1.14,
                "total_gb": 11.81,
                "trainable_params": 41943040,
            },
            "gpus": [
                {
                    "gpu_id": "a100-sxm-80gb",
                    "gpu_name": "A100 SXM",
                    **_QLORA_8B_ON_80_GB,
                    "job": {
                        "num_gpus": 1,
                        "hours": 3.4885,
                        "gpu_hours": 3.4885,
                        "price_per_gpu_hour": "1.59",
                        "cost": "5.546715",
                        "currency": "USD",
                    },
                },
                {
                    "gpu_id": "h100-sxm",
                    "gpu_name": "H100 SXM",
                    **_QLORA_8B_ON_80_GB,
                    "job": {
                        "num_gpus": 1,
                        "hours": 1.1001,
                        "gpu_hours": 1.1001,
                        "price_per_gpu_hour": "2.49",
                        "cost": "2.739249",
                        "currency": "USD",
                    },
                },
                {
                    "gpu_id": "rtx-4090",
                    "gpu_name": "RTX 4090",
                    "memory_gb": 24.0,
                    "required_gb": 11.81,
                    "headroom_gb": 12.19,
                    "headroom_pct": 50.8,
                    "fits": True,
                    "job": {
                        "num_gpus": 1,
                        "hours": 6.5885,
                        "gpu_hours": 6.5885,
                        "price_per_gpu_hour": "0.39",
                        "cost": "2.569515",
                        "currency": "USD",
                    },
                },
            ],
            "dataset": {"examples": 20000, "avg_tokens": 512, "epochs": 2.0, "tokens": 20480000.0},
            "training_flops": 9.4416266067968e17,
        }
    )

    model: ModelRef
    method: Method
    memory: MemoryOut
    gpus: list[GpuCheck]
    dataset: DatasetOut | None
    training_flops: float | None = Field(description="Hardware FLOPs of the job, with a dataset.")


class RecommendationQuery(BaseModel):
    """Query of /v1/recommendations; without a dataset, 1,000 examples x 1,000 tokens."""

    model_config = ConfigDict(extra="forbid")

    model: CatalogId = Field(description="A model id from /v1/models.")
    method: Method
    seq_len: int = Field(default=2048, ge=1, le=MAX_SEQ_LEN)
    micro_batch: int = Field(default=1, ge=1, le=MAX_MICRO_BATCH)
    lora_rank: int = Field(default=16, ge=1, le=MAX_LORA_RANK)
    num_gpus: int = Field(default=1, ge=1, le=MAX_GPUS)
    examples: int = Field(default=1000, ge=1, le=MAX_EXAMPLES)
    avg_tokens: int = Field(default=1000, ge=1, le=MAX_AVG_TOKENS)
    epochs: float = Field(default=1.0, gt=0, le=MAX_EPOCHS, allow_inf_nan=False)
    currency: Currency = Field(default=Currency.USD, description="Price the job in this currency.")
    tier: Literal["on_demand", "interruptible"] = Field(
        default="on_demand", description="Price the job at this tier's best asks."
    )


class Recommendation(BaseModel):
    """One GPU that holds the job, with its estimated time."""

    rank: int = Field(ge=1)
    gpu_id: str
    gpu_name: str
    memory_gb: float
    headroom_gb: float
    headroom_pct: float
    num_gpus: int
    hours: float
    gpu_hours: float
    price_per_gpu_hour: DecimalAmount | None = Field(
        default=None, description="The tier's live best ask; null when nothing is offered."
    )
    cost: DecimalAmount | None = Field(default=None, description="Estimated job cost.")
    currency: Currency | None = None


class RecommendationList(BaseModel):
    """GPUs that fit a model and method, best first."""

    model_config = examples(
        {
            "model": _LLAMA_8B_REF,
            "method": "lora",
            "ranked_by": "cost",
            "tier": "on_demand",
            "required_gb": 21.83,
            "dataset": {"examples": 20000, "avg_tokens": 512, "epochs": 2.0, "tokens": 20480000.0},
            "items": [
                {
                    "rank": 1,
                    "gpu_id": "rtx-4090",
                    "gpu_name": "RTX 4090",
                    "memory_gb": 24.0,
                    "headroom_gb": 2.17,
                    "headroom_pct": 9.0,
                    "num_gpus": 1,
                    "hours": 3.969,
                    "gpu_hours": 3.969,
                    "price_per_gpu_hour": "0.39",
                    "cost": "1.547910",
                    "currency": "USD",
                },
                {
                    "rank": 2,
                    "gpu_id": "h100-sxm",
                    "gpu_name": "H100 SXM",
                    "memory_gb": 80.0,
                    "headroom_gb": 58.17,
                    "headroom_pct": 72.7,
                    "num_gpus": 1,
                    "hours": 0.6627,
                    "gpu_hours": 0.6627,
                    "price_per_gpu_hour": "2.49",
                    "cost": "1.650123",
                    "currency": "USD",
                },
                {
                    "rank": 3,
                    "gpu_id": "a100-sxm-80gb",
                    "gpu_name": "A100 SXM",
                    "memory_gb": 80.0,
                    "headroom_gb": 58.17,
                    "headroom_pct": 72.7,
                    "num_gpus": 1,
                    "hours": 2.1016,
                    "gpu_hours": 2.1016,
                    "price_per_gpu_hour": "1.59",
                    "cost": "3.341544",
                    "currency": "USD",
                },
            ],
        }
    )

    model: ModelRef
    method: Method
    ranked_by: Literal["hours", "cost"] = Field(
        description="`cost` (cheapest first; GPUs without an offer after them, fastest"
        " first) when any GPU has a live best ask in the tier, else `hours`."
    )
    tier: str = Field(description="Whose best asks price the job.")
    required_gb: float = Field(description="Estimated peak VRAM per GPU, GiB.")
    dataset: DatasetOut
    items: list[Recommendation]
