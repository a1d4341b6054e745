"""The detailed VRAM estimator: input validation, component arithmetic and GPU headroom."""

from __future__ import annotations

from typing import Any

import pytest

# Realistic inputs: the GPUs and models the catalog service ships (its one copy of them).
from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_estimator import (
    ESTIMATOR_CONSTANTS,
    InvalidInputError,
    Method,
    ModelArch,
    Optimizer,
    TargetModules,
    TrainingSettings,
    check_gpus,
    custom_model,
    estimate_memory,
    gpus_that_fit,
    lora_params,
)
from gpux_estimator.estimator import GIB

pytestmark = pytest.mark.unit

LLAMA_2_7B = ModelArch(
    id="llama-2-7b", name="Llama 2 7B", params_b=6.74, layers=32, hidden=4096,
    intermediate=11008, heads=32, kv_heads=32, vocab=32000, head_dim=128, source="config.json",
)  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("seq_len", 0, r"seq_len must be an integer in 1\.\.1_048_576"),
        ("seq_len", 1_048_577, "seq_len"),
        ("micro_batch", 0, r"micro_batch must be an integer in 1\.\.1_024"),
        ("micro_batch", 1025, "micro_batch"),
        ("lora_rank", 0, r"lora_rank must be an integer in 1\.\.1_024"),
        ("lora_rank", 1025, "lora_rank"),
        ("num_gpus", 0, r"num_gpus must be an integer in 1\.\.1_024"),
        ("num_gpus", 1025, "num_gpus"),
        ("seq_len", True, "seq_len"),
        ("seq_len", 2048.0, "seq_len"),
        ("seq_len", "2048", "seq_len"),
        ("method", "dora", "method must be one of qlora | lora | full, got 'dora'"),
        ("optimizer", "sgd", "optimizer must be one of adamw_32bit"),
        ("target_modules", "mlp", "target_modules must be one of qv | attention | all_linear"),
        ("gradient_checkpointing", 1, "gradient_checkpointing must be true or false"),
        ("fused_loss", "yes", "fused_loss"),
    ],
)
def test_invalid_settings_raise_a_clear_domain_error(field: str, value: Any, message: str) -> None:
    kwargs: dict[str, Any] = {"method": "qlora", field: value}
    with pytest.raises(InvalidInputError, match=message):
        TrainingSettings(**kwargs)


def test_domain_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="seq_len"):
        TrainingSettings(method=Method.LORA, seq_len=-5)


def test_strings_are_coerced_to_enums() -> None:
    settings = TrainingSettings(method="lora", optimizer="paged_adamw_8bit", target_modules="qv")  # type: ignore[arg-type]
    assert settings.method is Method.LORA
    assert settings.optimizer is Optimizer.PAGED_ADAMW_8BIT
    assert settings.target_modules is TargetModules.QV


@pytest.mark.parametrize("params_b", [0.0, 0.01, 2001, float("nan"), True])
def test_custom_model_size_is_validated(params_b: Any) -> None:
    with pytest.raises(InvalidInputError, match="params_b"):
        custom_model(params_b)


@pytest.mark.parametrize("params_b", [0.1, 0.5, 1.0, 7.0, 13.0, 70.0, 405.0, 1000.0])
def test_custom_model_lands_near_the_requested_size(params_b: float) -> None:
    model = custom_model(params_b)
    assert model.custom
    assert model.total_params / 1e9 == pytest.approx(params_b, rel=0.07)
    assert model.heads % model.kv_heads == 0


def test_lora_parameter_count_matches_peft_for_llama_2_7b() -> None:
    # PEFT's print_trainable_parameters() for Llama-2-7B, r=8 on q_proj and v_proj.
    assert lora_params(LLAMA_2_7B, 8, TargetModules.QV) == 4_194_304
    attention = lora_params(LLAMA_2_7B, 8, TargetModules.ATTENTION)
    assert attention == 2 * 4_194_304
    mlp = 32 * 3 * 8 * (4096 + 11008)
    assert lora_params(LLAMA_2_7B, 8, TargetModules.ALL_LINEAR) == attention + mlp


def test_components_add_up_and_qlora_weights_are_about_4_bits() -> None:
    model = load_model_catalog().get("llama-3.1-8b")
    estimate = estimate_memory(model, TrainingSettings(method=Method.QLORA))
    parts = (
        estimate.weights_gb, estimate.adapters_gb, estimate.gradients_gb,
        estimate.optimizer_gb, estimate.activations_gb, estimate.overhead_gb,
    )  # fmt: skip
    assert estimate.total_gb == pytest.approx(sum(parts))
    # 6.98e9 block weights at 4.127 bits + 1.05e9 embedding/head params at 16 bits.
    expected = (model.block_linear_params * 4.127 / 8 + model.embedding_params * 2) / GIB
    assert estimate.weights_gb == pytest.approx(expected, rel=0.001)
    assert estimate.trainable_params == lora_params(model, 16, TargetModules.ALL_LINEAR)


def test_full_fine_tuning_is_16_bytes_per_parameter_before_activations() -> None:
    model = load_model_catalog().get("llama-3.1-8b")
    estimate = estimate_memory(model, TrainingSettings(method=Method.FULL))
    states = estimate.weights_gb + estimate.gradients_gb + estimate.optimizer_gb
    assert states == pytest.approx(16 * model.total_params / GIB, rel=0.001)
    assert estimate.adapters_gb == 0


def test_sharding_divides_states_by_the_gpu_count() -> None:
    model = load_model_catalog().get("llama-3.1-70b")
    one = estimate_memory(model, TrainingSettings(method=Method.FULL))
    eight = estimate_memory(model, TrainingSettings(method=Method.FULL, num_gpus=8))
    assert eight.optimizer_gb == pytest.approx(one.optimizer_gb / 8)
    assert eight.gradients_gb == pytest.approx(one.gradients_gb / 8)
    gathered = ESTIMATOR_CONSTANTS.fsdp_prefetch_layers * model.per_layer_params * 2 / GIB
    assert eight.weights_gb == pytest.approx(one.weights_gb / 8 + gathered)
    assert eight.activations_gb == pytest.approx(one.activations_gb)


def test_checkpointing_and_fused_loss_reduce_activations() -> None:
    model = load_model_catalog().get("qwen-2.5-7b")
    base = TrainingSettings(method=Method.LORA, seq_len=4096, gradient_checkpointing=False)
    plain = estimate_memory(model, base).activations_gb
    ckpt = estimate_memory(model, TrainingSettings(method=Method.LORA, seq_len=4096)).activations_gb
    fused = estimate_memory(
        model, TrainingSettings(method=Method.LORA, seq_len=4096, fused_loss=True)
    ).activations_gb
    assert fused < ckpt < plain


def test_headroom_per_gpu() -> None:
    gpus = load_gpu_catalog()
    model = load_model_catalog().get("llama-3.1-8b")
    estimate = estimate_memory(model, TrainingSettings(method=Method.QLORA, seq_len=1024))
    rows = {row.gpu_id: row for row in check_gpus(estimate, gpus)}
    h100 = rows["h100-sxm"]
    assert h100.fits
    assert h100.headroom_gb == pytest.approx(80 - estimate.total_gb)
    assert h100.headroom_pct == pytest.approx(100 * (80 - estimate.total_gb) / 80)
    seventy = load_model_catalog().get("llama-3.1-70b")
    big = estimate_memory(seventy, TrainingSettings(method=Method.LORA))
    fitting = {row.gpu_id for row in gpus_that_fit(big, gpus)}
    assert "rtx-4090" not in fitting
    assert all(row.headroom_gb < 0 for row in check_gpus(big, gpus) if row.gpu_id not in fitting)
