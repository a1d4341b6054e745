"""Rule-of-thumb fit: the largest base model per method that fits in 80 % of a GPU's memory.

One rule produces every figure (docs/ESTIMATES.md, "Rule-of-thumb fit"):

    raw_b = memory_gb * budget_fraction / bytes_per_param[method]
    fit_b = floor(raw_b / 5) * 5   if raw_b >= 10
            floor(raw_b)           otherwise

Exact rational arithmetic (Fraction) is used so that a value such as 0.8 * 50 / 1.0 lands
exactly on 40 instead of 39.999... and the rounding never flips on a float artefact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from gpux_estimator.errors import InvalidInputError
from gpux_estimator.gpus import GpuSpec

MAX_MEMORY_GB = 1_000_000


@dataclass(frozen=True, slots=True)
class FitRule:
    """The constants of the rule of thumb, all in one place."""

    # Share of memory the model may use; the rest is reserve for context, batch and framework.
    budget_fraction: Fraction = Fraction(4, 5)
    # QLoRA: 4-bit NF4 weights (0.5 B) + quantisation constants (~0.016 B) + reserve for
    # 16-bit embeddings, adapters, their optimizer states and activations (~0.5 B).
    qlora_bytes_per_param: Fraction = Fraction(1)
    # LoRA on a 16-bit base: 2 B frozen weights + ~0.5 B for adapters, optimizer, activations.
    lora16_bytes_per_param: Fraction = Fraction(5, 2)
    # Full fine-tuning, mixed precision + AdamW: 2 weights + 2 grads + 12 fp32 master/m/v (ZeRO).
    full_bytes_per_param: Fraction = Fraction(16)
    # Inference: weight bytes (2 / 1 / 0.5) x 1.2 for KV cache and activations at modest context.
    inference_fp16_bytes_per_param: Fraction = Fraction(12, 5)
    inference_int8_bytes_per_param: Fraction = Fraction(6, 5)
    inference_int4_bytes_per_param: Fraction = Fraction(3, 5)
    # Rounding: down to a multiple of `coarse_step_b` from `coarse_threshold_b` up, else whole B.
    coarse_threshold_b: int = 10
    coarse_step_b: int = 5


FIT_RULE = FitRule()


@dataclass(frozen=True, slots=True)
class Fit:
    """Largest base model per method, in billions of parameters, for one memory size."""

    memory_gb: float
    budget_gb: float
    qlora_b: int
    lora16_b: int
    full_b: int
    inference_fp16_b: int
    inference_int8_b: int
    inference_int4_b: int


MemorySize = float | int | Decimal | Fraction


def _exact(value: MemorySize) -> Fraction:
    """Exact rational value of a memory size, validated."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | Fraction):
        raise InvalidInputError("memory_gb must be a number")
    finite = value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)
    if not finite:
        raise InvalidInputError(f"memory_gb must be finite, got {value}")
    # str() of a float is its shortest repr, so 141.0 -> 141 and 0.1 -> 1/10 exactly.
    exact = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    if not 0 < exact <= MAX_MEMORY_GB:
        raise InvalidInputError(f"memory_gb must be > 0 and <= {MAX_MEMORY_GB}, got {value}")
    return exact


def round_down_billions(raw_b: Fraction, rule: FitRule = FIT_RULE) -> int:
    """Apply the rule's single rounding rule to a raw size in billions."""
    if raw_b >= rule.coarse_threshold_b:
        return math.floor(raw_b / rule.coarse_step_b) * rule.coarse_step_b
    return math.floor(raw_b)


def max_params_b(memory_gb: MemorySize, bytes_per_param: Fraction, rule: FitRule = FIT_RULE) -> int:
    """Largest model (billions of params) at ``bytes_per_param`` within the memory budget."""
    # GB / (bytes per param) = billions of params, since 1 GB = 1e9 bytes in this rule.
    raw_b = _exact(memory_gb) * rule.budget_fraction / bytes_per_param
    return round_down_billions(raw_b, rule)


def fit_for_memory(memory_gb: MemorySize, rule: FitRule = FIT_RULE) -> Fit:
    """Fit for a GPU with ``memory_gb`` of memory, every method from the one rule."""
    exact = _exact(memory_gb)
    return Fit(
        memory_gb=float(exact),
        budget_gb=float(exact * rule.budget_fraction),
        qlora_b=max_params_b(exact, rule.qlora_bytes_per_param, rule),
        lora16_b=max_params_b(exact, rule.lora16_bytes_per_param, rule),
        full_b=max_params_b(exact, rule.full_bytes_per_param, rule),
        inference_fp16_b=max_params_b(exact, rule.inference_fp16_bytes_per_param, rule),
        inference_int8_b=max_params_b(exact, rule.inference_int8_bytes_per_param, rule),
        inference_int4_b=max_params_b(exact, rule.inference_int4_bytes_per_param, rule),
    )


def fit_for_gpu(gpu: GpuSpec, rule: FitRule = FIT_RULE) -> Fit:
    """Fit for one catalog GPU."""
    return fit_for_memory(gpu.memory_gb, rule)
