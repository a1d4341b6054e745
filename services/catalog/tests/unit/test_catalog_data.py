"""The packaged data files load, are complete, and are sourced."""

from __future__ import annotations

import pytest

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_estimator import UnknownItemError

pytestmark = pytest.mark.unit

REQUIRED_GPUS = {
    "rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "l40s", "rtx-6000-ada", "a100-sxm-80gb",
    "a100-pcie-40gb", "h100-sxm", "h100-pcie", "rtx-pro-6000-blackwell", "h200", "l4", "b200",
}  # fmt: skip
REQUIRED_MODELS = {
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.2-1b", "llama-3.2-3b", "qwen-2.5-7b",
    "qwen-2.5-14b", "qwen-2.5-32b", "qwen-2.5-72b", "mistral-7b", "mixtral-8x7b", "gemma-2-9b",
    "gemma-2-27b", "phi-3-mini",
}  # fmt: skip
# Memory and bandwidth exactly as on the product page (shared/reference).
PAGE_FIGURES = {
    "rtx-4090": ("RTX 4090", 24, 1008),
    "rtx-5090": ("RTX 5090", 32, 1792),
    "rtx-a6000": ("RTX A6000", 48, 768),
    "l40s": ("L40S", 48, 864),
    "rtx-6000-ada": ("RTX 6000 Ada", 48, 960),
    "a100-sxm-80gb": ("A100 SXM", 80, 2039),
    "h100-sxm": ("H100 SXM", 80, 3350),
    "rtx-pro-6000-blackwell": ("RTX PRO 6000 Blackwell", 96, 1792),
    "h200": ("H200", 141, 4800),
}
ARCHITECTURES = {"Ampere", "Ada Lovelace", "Hopper", "Blackwell"}
MEMORY_TYPES = {"GDDR6", "GDDR6X", "GDDR7", "HBM2", "HBM2e", "HBM3", "HBM3e"}


def test_gpu_data_loads_with_a_version_and_unique_ids() -> None:
    catalog = load_gpu_catalog()
    assert catalog.version >= 1
    assert len(set(catalog.ids)) == len(catalog) >= len(REQUIRED_GPUS)
    assert set(catalog.ids) >= REQUIRED_GPUS


def test_every_gpu_row_is_sourced_and_plausible() -> None:
    for gpu in load_gpu_catalog():
        assert gpu.source.strip(), gpu.id
        assert gpu.architecture in ARCHITECTURES, gpu.id
        assert gpu.memory_type in MEMORY_TYPES, gpu.id
        assert gpu.fp16_tflops >= gpu.bf16_tflops > 0, gpu.id
        # FP8 tensor cores arrived with Ada and Hopper; Ampere rows must not claim any.
        assert (gpu.fp8_tflops is None) == (gpu.architecture == "Ampere"), gpu.id
        if gpu.fp8_tflops is not None:
            assert gpu.fp8_tflops == pytest.approx(2 * gpu.bf16_tflops, rel=0.02), gpu.id


@pytest.mark.parametrize(("gpu_id", "figures"), sorted(PAGE_FIGURES.items()))
def test_page_memory_and_bandwidth_match_exactly(
    gpu_id: str, figures: tuple[str, int, int]
) -> None:
    gpu = load_gpu_catalog().get(gpu_id)
    assert (gpu.name, gpu.memory_gb, gpu.bandwidth_gb_s) == figures


def test_model_data_loads_and_shapes_reproduce_the_stated_parameter_counts() -> None:
    catalog = load_model_catalog()
    assert catalog.version >= 1
    assert set(catalog.ids) >= REQUIRED_MODELS
    for model in catalog:
        assert model.source.strip(), model.id
        assert model.total_params / 1e9 == pytest.approx(model.params_b, rel=0.03), model.id


def test_mixtral_active_parameters_match_the_model_card() -> None:
    mixtral = load_model_catalog().get("mixtral-8x7b")
    active = mixtral.active_block_linear_params + mixtral.embedding_params
    assert active / 1e9 == pytest.approx(12.9, rel=0.03)


def test_unknown_ids_raise_a_domain_error() -> None:
    with pytest.raises(UnknownItemError, match="nope"):
        load_gpu_catalog().get("nope")
    with pytest.raises(UnknownItemError, match="nope"):
        load_model_catalog().get("nope")
