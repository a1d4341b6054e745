"""Malformed GPU and model data is refused with a CatalogDataError naming the field."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from gpux_estimator import (
    CatalogDataError,
    GpuCatalog,
    ModelCatalog,
    gpu_catalog_from_mapping,
    model_catalog_from_mapping,
)

pytestmark = pytest.mark.unit


def _gpu_row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": "X1", "vendor": "NVIDIA", "architecture": "Hopper", "memory_gb": 80,
        "memory_type": "HBM3", "bandwidth_gb_s": 3350, "bf16_tflops": 989.4,
        "fp16_tflops": 989.4, "tdp_w": 700, "form_factor": "SXM5", "interconnect": "NVLink",
        "source": "datasheet",
    }  # fmt: skip
    row.update(changes)
    return {key: value for key, value in row.items() if value is not None}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"gpus": {"x1": _gpu_row()}}, "version"),
        ({"version": 1, "gpus": {}}, "no GPUs"),
        ({"version": 1, "gpus": {"x1": _gpu_row(source=None)}}, "source"),
        ({"version": 1, "gpus": {"x1": _gpu_row(source="  ")}}, "source"),
        ({"version": 1, "gpus": {"x1": _gpu_row(memory_gb=True)}}, "memory_gb"),
        ({"version": 1, "gpus": {"x1": _gpu_row(memory_gb=-1)}}, "memory_gb"),
        ({"version": 1, "gpus": {"X 1": _gpu_row()}}, "slug"),
        ({"version": 1, "gpus": {"a": _gpu_row(), "b": _gpu_row()}}, "unique"),
    ],
)
def test_malformed_gpu_data_is_refused(document: dict[str, Any], message: str) -> None:
    with pytest.raises(CatalogDataError, match=message):
        gpu_catalog_from_mapping(document)


def test_malformed_model_data_is_refused() -> None:
    row = {
        "name": "M", "params_b": 1.0, "layers": 2, "hidden_size": 64, "intermediate_size": 128,
        "attention_heads": 4, "kv_heads": 3, "vocab_size": 100, "source": "card",
    }  # fmt: skip
    with pytest.raises(CatalogDataError, match="kv_heads"):
        model_catalog_from_mapping({"version": 1, "models": {"m": row}})
    with pytest.raises(CatalogDataError, match="source"):
        model_catalog_from_mapping({"version": 1, "models": {"m": {**row, "source": ""}}})


def test_a_catalog_refuses_two_items_with_one_id_or_gpu_name() -> None:
    (gpu,) = gpu_catalog_from_mapping({"version": 1, "gpus": {"a": _gpu_row()}})
    for twin in (replace(gpu, id="b"), replace(gpu, name="X2")):
        with pytest.raises(CatalogDataError, match=r"^GPU catalog: ids and names must be unique$"):
            GpuCatalog(version=1, gpus=(gpu, twin))
    row = {
        "name": "M", "params_b": 1.0, "layers": 2, "hidden_size": 64, "intermediate_size": 128,
        "attention_heads": 4, "kv_heads": 2, "vocab_size": 100, "source": "card",
    }  # fmt: skip
    (model,) = model_catalog_from_mapping({"version": 1, "models": {"m": row}})
    with pytest.raises(CatalogDataError, match=r"^model catalog: ids must be unique$"):
        ModelCatalog(version=1, models=(model, replace(model, name="M2")))
