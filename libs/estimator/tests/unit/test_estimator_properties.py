"""Hypothesis properties of the fit rule and the estimator (monotonicity and ordering)."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# Realistic inputs: the GPUs and models the catalog service ships (its one copy of them).
from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_estimator import (
    Method,
    ModelArch,
    Optimizer,
    TargetModules,
    TrainingSettings,
    custom_model,
    estimate_memory,
    fit_for_memory,
    gpus_that_fit,
)

pytestmark = pytest.mark.unit

FIT_FIELDS = [f.name for f in fields(fit_for_memory(1)) if f.name.endswith("_b")]

memory = st.floats(min_value=0.5, max_value=100_000, allow_nan=False, allow_infinity=False)
models = st.one_of(
    st.sampled_from(list(load_model_catalog())),
    st.floats(min_value=0.05, max_value=500).map(custom_model),
)


@st.composite
def training(draw: st.DrawFn, max_rank: int = 1024) -> TrainingSettings:
    """Any valid settings (kept to sizes where the arithmetic stays meaningful)."""
    return TrainingSettings(
        method=draw(st.sampled_from(Method)),
        seq_len=draw(st.integers(1, 131_072)),
        micro_batch=draw(st.integers(1, 64)),
        lora_rank=draw(st.integers(1, max_rank)),
        target_modules=draw(st.sampled_from(TargetModules)),
        gradient_checkpointing=draw(st.booleans()),
        optimizer=draw(st.sampled_from(Optimizer)),
        num_gpus=draw(st.integers(1, 64)),
        fused_loss=draw(st.booleans()),
    )


def _with(s: TrainingSettings, **changes: object) -> TrainingSettings:
    values = {f.name: getattr(s, f.name) for f in fields(s)}
    values.update(changes)
    return TrainingSettings(**values)


@settings(max_examples=300, deadline=None)
@given(memory, memory)
def test_fit_never_decreases_with_more_memory(a: float, b: float) -> None:
    small, large = fit_for_memory(min(a, b)), fit_for_memory(max(a, b))
    for name in FIT_FIELDS:
        assert getattr(small, name) <= getattr(large, name), name


@settings(max_examples=300, deadline=None)
@given(memory)
def test_fit_orders_the_methods(gb: float) -> None:
    fit = fit_for_memory(gb)
    assert fit.qlora_b >= fit.lora16_b >= fit.full_b
    assert fit.inference_int4_b >= fit.inference_int8_b >= fit.inference_fp16_b


@settings(max_examples=150, deadline=None)
@given(models, training(), st.integers(1, 131_072), st.integers(0, 64))
def test_total_never_decreases_with_longer_sequences_or_bigger_batches(
    model: ModelArch, s: TrainingSettings, more_seq: int, more_batch: int
) -> None:
    longer = _with(s, seq_len=min(s.seq_len + more_seq, 1_048_576))
    bigger = _with(s, micro_batch=s.micro_batch + more_batch)
    base = estimate_memory(model, s).total_gb
    assert estimate_memory(model, longer).total_gb >= base
    assert estimate_memory(model, bigger).total_gb >= base


@settings(max_examples=100, deadline=None)
@given(models, training(), st.integers(1, 65_536))
def test_gpus_that_fit_never_grow_with_longer_sequences(
    model: ModelArch, s: TrainingSettings, more_seq: int
) -> None:
    gpus = load_gpu_catalog()
    before = {row.gpu_id for row in gpus_that_fit(estimate_memory(model, s), gpus)}
    longer = estimate_memory(model, _with(s, seq_len=min(s.seq_len + more_seq, 1_048_576)))
    assert {row.gpu_id for row in gpus_that_fit(longer, gpus)} <= before


@settings(max_examples=200, deadline=None)
@given(models, training(max_rank=256))
def test_qlora_below_lora_below_full_for_the_same_settings(
    model: ModelArch, s: TrainingSettings
) -> None:
    # Up to rank 256: beyond that an adapter can outgrow the matrix it adapts on small models.
    qlora = estimate_memory(model, _with(s, method=Method.QLORA)).total_gb
    lora = estimate_memory(model, _with(s, method=Method.LORA)).total_gb
    full = estimate_memory(model, _with(s, method=Method.FULL)).total_gb
    assert qlora < lora < full
