"""Job time and cost: training FLOPs for a dataset, hours per GPU, and cost when priced.

Formulas and constants are derived and sourced in docs/ESTIMATES.md ("Job time and cost").
Money is Decimal throughout; without a price the cost is None, never invented.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from gpux_estimator.errors import InvalidInputError
from gpux_estimator.estimator import (
    GpuHeadroom,
    Method,
    TrainingSettings,
    estimate_memory,
    headroom,
)
from gpux_estimator.gpus import GpuSpec
from gpux_estimator.models import ModelArch

MAX_EXAMPLES = 10**10
MAX_AVG_TOKENS = 1_048_576
MAX_EPOCHS = 1000
HOURS_QUANTUM = Decimal("0.0001")  # 0.36 s: hours are rounded UP to this, never down
CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True, slots=True)
class JobConstants:
    """Every constant of the time model, in one place (sources in ESTIMATES.md)."""

    # Model FLOPs per trained token per parameter: forward 2, backward 4 (Kaplan et al. 2020).
    full_flops_per_param: float = 6.0
    # LoRA/QLoRA skip the weight-gradient matmuls of the frozen base: 2 + 2 = 4 (= 2/3 of 6).
    adapter_flops_per_param: float = 4.0
    # Gradient checkpointing recomputes the forward pass once more: + 2 per parameter.
    recompute_flops_per_param: float = 2.0
    # Attention score/value matmuls per token: 12 * layers * q_dim * context (PaLM, App. B).
    attention_flops_factor: float = 12.0
    # Share of dense BF16 peak a fine-tuning run sustains (model FLOPs utilisation).
    mfu: float = 0.40
    # QLoRA dequantises the 4-bit base in every matmul: wall time x this vs. LoRA.
    qlora_slowdown: float = 1.66


JOB_CONSTANTS = JobConstants()


@dataclass(frozen=True, slots=True)
class Dataset:
    """A fine-tuning dataset: examples x average tokens per example x epochs."""

    examples: int
    avg_tokens: int
    epochs: float = 1.0

    def __post_init__(self) -> None:
        for name, upper in (("examples", MAX_EXAMPLES), ("avg_tokens", MAX_AVG_TOKENS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= upper:
                raise InvalidInputError(f"{name} must be an integer in 1..{upper:_}")
        epochs = self.epochs
        if isinstance(epochs, bool) or not isinstance(epochs, int | float):
            raise InvalidInputError("epochs must be a number")
        if not (math.isfinite(epochs) and 0 < epochs <= MAX_EPOCHS):
            raise InvalidInputError(f"epochs must be > 0 and <= {MAX_EPOCHS}")

    @property
    def tokens(self) -> float:
        """Tokens processed over the whole job."""
        return self.examples * self.avg_tokens * float(self.epochs)


@dataclass(frozen=True, slots=True)
class Price:
    """A price per GPU-hour in one currency (Decimal, never float)."""

    amount: Decimal
    currency: str

    def __post_init__(self) -> None:
        if not isinstance(self.amount, Decimal) or not self.amount.is_finite():
            raise InvalidInputError("price amount must be a finite Decimal, not a float")
        if self.amount < 0:
            raise InvalidInputError("price amount must not be negative")
        if not isinstance(self.currency, str) or not CURRENCY.match(self.currency):
            raise InvalidInputError("currency must be a three-letter ISO 4217 code, e.g. USD")


@dataclass(frozen=True, slots=True)
class JobEstimate:
    """Estimated wall-clock hours of one job on ``num_gpus`` GPUs of one kind, and its cost."""

    gpu_id: str
    num_gpus: int
    tokens: float
    flops: float
    hours: Decimal
    gpu_hours: Decimal
    cost: Decimal | None
    currency: str | None


@dataclass(frozen=True, slots=True)
class RankedGpu:
    """One GPU that holds the job, with its memory headroom and job estimate."""

    gpu: GpuSpec
    headroom: GpuHeadroom
    job: JobEstimate


def flops_per_token(
    model: ModelArch, settings: TrainingSettings, context: int, c: JobConstants = JOB_CONSTANTS
) -> float:
    """Hardware FLOPs per trained token (incl. recomputation) at attention ``context``."""
    # Matmul parameters one token meets: active block weights plus the output head.
    params = model.active_block_linear_params + model.vocab * model.hidden
    attention = c.attention_flops_factor * model.layers * model.q_dim * context
    full = settings.method is Method.FULL
    per_param = c.full_flops_per_param if full else c.adapter_flops_per_param
    flops = per_param * params + attention
    if settings.gradient_checkpointing:
        # Recomputed forward: 2 per parameter and a third of the attention term.
        flops += c.recompute_flops_per_param * params + attention / 3
    return flops


def training_flops(
    model: ModelArch, settings: TrainingSettings, dataset: Dataset, c: JobConstants = JOB_CONSTANTS
) -> float:
    """Hardware FLOPs of the whole job."""
    # Attention spans one example unless examples are longer than the sequence length.
    context = min(dataset.avg_tokens, settings.seq_len)
    return dataset.tokens * flops_per_token(model, settings, context, c)


def _hours(flops: float, gpu: GpuSpec, settings: TrainingSettings, c: JobConstants) -> Decimal:
    """Wall-clock hours from FLOPs, rounded up to HOURS_QUANTUM."""
    sustained = gpu.bf16_tflops * 1e12 * c.mfu * settings.num_gpus
    seconds = flops / sustained
    if settings.method is Method.QLORA:
        seconds *= c.qlora_slowdown
    hours = Decimal(repr(seconds / 3600))
    return max(HOURS_QUANTUM, hours.quantize(HOURS_QUANTUM, rounding=ROUND_CEILING))


def estimate_job(
    model: ModelArch,
    settings: TrainingSettings,
    dataset: Dataset,
    gpu: GpuSpec,
    price: Price | None = None,
    *,
    constants: JobConstants = JOB_CONSTANTS,
) -> JobEstimate:
    """Hours of the job on ``settings.num_gpus`` x ``gpu``; cost = hours x gpus x price."""
    flops = training_flops(model, settings, dataset, constants)
    hours = _hours(flops, gpu, settings, constants)
    gpu_hours = hours * settings.num_gpus
    return JobEstimate(
        gpu_id=gpu.id,
        num_gpus=settings.num_gpus,
        tokens=dataset.tokens,
        flops=flops,
        hours=hours,
        gpu_hours=gpu_hours,
        cost=None if price is None else gpu_hours * price.amount,
        currency=None if price is None else price.currency,
    )


def rank_gpus_for_job(
    model: ModelArch,
    settings: TrainingSettings,
    dataset: Dataset,
    gpus: Iterable[GpuSpec],
    prices: Mapping[str, Price] | None = None,
    *,
    constants: JobConstants = JOB_CONSTANTS,
) -> tuple[RankedGpu, ...]:
    """GPUs that hold the job, cheapest first; unpriced ones after, fastest first."""
    prices = prices or {}
    if len({price.currency for price in prices.values()}) > 1:
        raise InvalidInputError("prices must all be in one currency to be ranked")
    required = estimate_memory(model, settings).total_gb
    ranked = []
    for gpu in gpus:
        room = headroom(required, gpu)
        if room.fits:
            job = estimate_job(
                model, settings, dataset, gpu, prices.get(gpu.id), constants=constants
            )
            ranked.append(RankedGpu(gpu=gpu, headroom=room, job=job))

    def order(entry: RankedGpu) -> tuple[bool, Decimal, Decimal, str]:
        """Priced before unpriced, then cost, then hours, then id for a stable order."""
        cost = entry.job.cost
        return (cost is None, cost or Decimal(0), entry.job.hours, entry.gpu.id)

    return tuple(sorted(ranked, key=order))
