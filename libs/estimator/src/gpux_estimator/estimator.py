"""Detailed VRAM estimator for fine-tuning one model: a per-component breakdown per GPU.

Every formula and constant is derived and sourced in docs/ESTIMATES.md ("Detailed
estimator"). Sizes are returned in GiB (2**30 bytes), the unit GPU memory is sized in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from gpux_estimator.errors import InvalidInputError
from gpux_estimator.gpus import GpuSpec
from gpux_estimator.models import ModelArch

GIB = float(2**30)

MAX_SEQ_LEN = 1_048_576
MAX_MICRO_BATCH = 1024
MAX_LORA_RANK = 1024
MAX_GPUS = 1024


class Method(StrEnum):
    """Fine-tuning method."""

    QLORA = "qlora"
    LORA = "lora"
    FULL = "full"


class Optimizer(StrEnum):
    """Optimizer whose states the estimator sizes (paged ones are sized as if resident)."""

    ADAMW_32BIT = "adamw_32bit"
    ADAMW_8BIT = "adamw_8bit"
    PAGED_ADAMW_32BIT = "paged_adamw_32bit"
    PAGED_ADAMW_8BIT = "paged_adamw_8bit"


class TargetModules(StrEnum):
    """Linear layers that receive LoRA adapters."""

    QV = "qv"
    ATTENTION = "attention"
    ALL_LINEAR = "all_linear"


@dataclass(frozen=True, slots=True)
class EstimatorConstants:
    """Every constant of the detailed estimator, in one place (sources in ESTIMATES.md)."""

    bf16_bytes: float = 2.0
    nf4_bits: float = 4.0
    # QLoRA double quantisation: 8-bit constants per 64 weights + fp32 per 256 constants.
    double_quant_bits: float = 8 / 64 + 32 / (64 * 256)
    # PEFT keeps adapter weights and therefore their gradients in fp32.
    adapter_bytes: float = 4.0
    adapter_grad_bytes: float = 4.0
    # Full fine-tuning in mixed precision (ZeRO paper): bf16 grads, fp32 master + Adam m, v.
    full_grad_bytes: float = 2.0
    master_weight_bytes: float = 4.0
    adam_state_bytes_32bit: float = 8.0
    adam_state_bytes_8bit: float = 2.0
    # Cross-entropy over the vocabulary per token and vocab entry: see ESTIMATES.md.
    logits_bytes_unfused: float = 16.0
    logits_bytes_fused: float = 2.0
    cuda_context_gib: float = 0.5
    fragmentation: float = 0.05
    fsdp_prefetch_layers: int = 2


ESTIMATOR_CONSTANTS = EstimatorConstants()

E = TypeVar("E", bound=StrEnum)


def _choice(kind: type[E], value: object, name: str) -> E:
    """Coerce a string to one of the enum's values or raise a clear InvalidInputError."""
    allowed = " | ".join(member.value for member in kind)
    if not isinstance(value, str) or value not in {member.value for member in kind}:
        raise InvalidInputError(f"{name} must be one of {allowed}, got {value!r}")
    return kind(value)


def _bounded(value: object, name: str, upper: int) -> int:
    """Validate an integer input in 1..upper."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= upper:
        raise InvalidInputError(f"{name} must be an integer in 1..{upper:_}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class TrainingSettings:
    """The knobs of one fine-tuning run that drive its memory and time."""

    method: Method
    seq_len: int = 2048
    micro_batch: int = 1
    lora_rank: int = 16
    target_modules: TargetModules = TargetModules.ALL_LINEAR
    gradient_checkpointing: bool = True
    optimizer: Optimizer = Optimizer.ADAMW_32BIT
    num_gpus: int = 1
    fused_loss: bool = False

    def __post_init__(self) -> None:
        # Coerce plain strings (from HTTP/JSON) so callers need not import the enums.
        set_ = object.__setattr__
        set_(self, "method", _choice(Method, self.method, "method"))
        set_(self, "target_modules", _choice(TargetModules, self.target_modules, "target_modules"))
        set_(self, "optimizer", _choice(Optimizer, self.optimizer, "optimizer"))
        _bounded(self.seq_len, "seq_len", MAX_SEQ_LEN)
        _bounded(self.micro_batch, "micro_batch", MAX_MICRO_BATCH)
        _bounded(self.lora_rank, "lora_rank", MAX_LORA_RANK)
        _bounded(self.num_gpus, "num_gpus", MAX_GPUS)
        for name in ("gradient_checkpointing", "fused_loss"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(f"{name} must be true or false")

    @property
    def uses_adapters(self) -> bool:
        """True for LoRA and QLoRA."""
        return self.method is not Method.FULL

    @property
    def tokens_per_step(self) -> int:
        """Tokens in one micro-batch on one GPU."""
        return self.seq_len * self.micro_batch


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Estimated peak VRAM per GPU in GiB, by component, with the total."""

    weights_gb: float
    adapters_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    overhead_gb: float
    total_gb: float
    trainable_params: int


@dataclass(frozen=True, slots=True)
class GpuHeadroom:
    """Whether one GPU holds an estimate, and by how much (negative headroom: it does not)."""

    gpu_id: str
    gpu_name: str
    memory_gb: float
    required_gb: float
    headroom_gb: float
    headroom_pct: float
    fits: bool


def lora_params(model: ModelArch, rank: int, target: TargetModules) -> int:
    """Trainable adapter parameters: rank x (d_in + d_out) per adapted linear (LoRA paper)."""
    h, q, kv = model.hidden, model.q_dim, model.kv_dim
    qv = rank * (h + q) + rank * (h + kv)
    per_layer = qv
    if target is not TargetModules.QV:
        per_layer += rank * (h + kv) + rank * (q + h)
    if target is TargetModules.ALL_LINEAR:
        per_layer += model.experts * 3 * rank * (h + model.intermediate)
    return model.layers * per_layer


def _block_weight_bytes(method: Method, c: EstimatorConstants) -> float:
    """Bytes per decoder-block linear weight: NF4 + constants for QLoRA, else bf16."""
    if method is Method.QLORA:
        return (c.nf4_bits + c.double_quant_bits) / 8
    return c.bf16_bytes


def weight_bytes(model: ModelArch, s: TrainingSettings, c: EstimatorConstants) -> float:
    """Frozen or trained base weights per GPU, incl. the FSDP gather of upcoming layers."""
    per_block = _block_weight_bytes(s.method, c)
    unsharded = model.block_linear_params * per_block
    # Embeddings, output head and norms are never quantised by bitsandbytes/torchao.
    unsharded += (model.embedding_params + model.norm_params) * c.bf16_bytes
    if s.num_gpus == 1:
        return unsharded
    gathered = min(c.fsdp_prefetch_layers, model.layers) * model.per_layer_params * per_block
    return unsharded / s.num_gpus + gathered


def training_state_bytes(
    trainable: int, s: TrainingSettings, c: EstimatorConstants
) -> tuple[float, float, float]:
    """(adapters, gradients, optimizer states) in bytes per GPU, sharded over num_gpus."""
    eight_bit = s.optimizer in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT)
    states = c.adam_state_bytes_8bit if eight_bit else c.adam_state_bytes_32bit
    if s.uses_adapters:
        adapters = trainable * c.adapter_bytes
        grads = trainable * c.adapter_grad_bytes
        optimizer = trainable * states
    else:
        adapters = 0.0
        grads = trainable * c.full_grad_bytes
        optimizer = trainable * (c.master_weight_bytes + states)
    n = s.num_gpus
    return adapters / n, grads / n, optimizer / n


def activation_bytes(model: ModelArch, s: TrainingSettings, c: EstimatorConstants) -> float:
    """Saved activations (FlashAttention, no s^2 term) plus the logits of the loss."""
    h, b = model.hidden, c.bf16_bytes
    mlp = model.intermediate * model.experts_per_token
    # Per token and layer: 2 norm inputs, 2 projection inputs, q/k/v, attention output and
    # gate, up, activation and product of the gated MLP (Korthikanti et al. 2022, adapted).
    per_layer = (4 * h + 2 * model.q_dim + 2 * model.kv_dim + 4 * mlp) * b
    if s.gradient_checkpointing:
        # Layer inputs are kept; one layer at a time is recomputed in full.
        per_token = model.layers * h * b + per_layer
    else:
        per_token = model.layers * per_layer
    logits = c.logits_bytes_fused if s.fused_loss else c.logits_bytes_unfused
    return s.tokens_per_step * (per_token + model.vocab * logits)


def estimate_memory(
    model: ModelArch,
    settings: TrainingSettings,
    constants: EstimatorConstants = ESTIMATOR_CONSTANTS,
) -> MemoryBreakdown:
    """Peak VRAM per GPU for fine-tuning ``model`` with ``settings``."""
    c, s = constants, settings
    if s.uses_adapters:
        trainable = lora_params(model, s.lora_rank, s.target_modules)
    else:
        trainable = model.total_params
    weights = weight_bytes(model, s, c)
    adapters, grads, optimizer = training_state_bytes(trainable, s, c)
    activations = activation_bytes(model, s, c)
    tensors = weights + adapters + grads + optimizer + activations
    overhead = c.cuda_context_gib * GIB + c.fragmentation * tensors
    if s.method is Method.QLORA:
        # One linear weight is dequantised to bf16 at a time for the matmul.
        widest = max(model.q_dim, model.intermediate)
        overhead += model.hidden * widest * c.bf16_bytes
    total = weights + adapters + grads + optimizer + activations + overhead
    return MemoryBreakdown(
        weights_gb=weights / GIB,
        adapters_gb=adapters / GIB,
        gradients_gb=grads / GIB,
        optimizer_gb=optimizer / GIB,
        activations_gb=activations / GIB,
        overhead_gb=overhead / GIB,
        total_gb=total / GIB,
        trainable_params=trainable,
    )


def headroom(required_gb: float, gpu: GpuSpec) -> GpuHeadroom:
    """Headroom of one GPU for an estimate of ``required_gb``."""
    spare = gpu.memory_gb - required_gb
    return GpuHeadroom(
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        memory_gb=gpu.memory_gb,
        required_gb=required_gb,
        headroom_gb=spare,
        headroom_pct=100.0 * spare / gpu.memory_gb,
        fits=spare >= 0,
    )


def check_gpus(breakdown: MemoryBreakdown, gpus: Iterable[GpuSpec]) -> tuple[GpuHeadroom, ...]:
    """Headroom of every GPU for one estimate, most headroom first."""
    rows = [headroom(breakdown.total_gb, gpu) for gpu in gpus]
    return tuple(sorted(rows, key=lambda row: (-row.headroom_gb, row.gpu_id)))


def gpus_that_fit(breakdown: MemoryBreakdown, gpus: Iterable[GpuSpec]) -> tuple[GpuHeadroom, ...]:
    """Only the GPUs that hold the estimate, most headroom first."""
    return tuple(row for row in check_gpus(breakdown, gpus) if row.fits)
