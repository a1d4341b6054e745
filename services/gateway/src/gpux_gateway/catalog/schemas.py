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


class TierAsk(BaseModel):
    """The best live price per GPU-hour of one tier, like the reference page's 'ab …'."""

    price: DecimalAmount
    currency: Currency
    gpus: int = Field(description="GPUs available at that price.")


class GpuOut(GpuPublished):
    """One GPU model as the catalog publishes it, with its best live ask per tier."""

    best_ask: dict[str, TierAsk] = Field(
        default_factory=dict,
        description="Best live offer per tier (`on_demand`, `interruptible`); a tier with no"
        " offer is absent.",
    )


class GpuList(BaseModel):
    """Every GPU model, by memory then bandwidth, with its best ask per tier."""

    items: list[GpuOut]


class ModelOut(ModelPublished):
    """An open model's architecture (its config.json) as the catalog publishes it."""


class ModelList(BaseModel):
    """Every model the estimator knows by name, smallest first."""

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

    model: CatalogId = Field(description="A model id from /v1/models.")


class EstimateForSize(EstimateSettings):
    """An estimate for any size: a Llama-like shape is derived from the parameter count."""

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


class EstimateOut(BaseModel):
    """A VRAM breakdown and, for every GPU, whether it fits (most headroom first)."""

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
