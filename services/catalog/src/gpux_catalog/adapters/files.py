"""Load the packaged GPU and model data files (``gpux_catalog/data``) into estimator objects."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files

from gpux_estimator import (
    GpuCatalog,
    ModelCatalog,
    gpu_catalog_from_mapping,
    model_catalog_from_mapping,
)

GPUS_FILE = "gpus.toml"
MODELS_FILE = "models.toml"


def _read(name: str) -> str:
    """Text of one file shipped in ``gpux_catalog/data``."""
    return (files("gpux_catalog") / "data" / name).read_text(encoding="utf-8")


@cache
def load_gpu_catalog() -> GpuCatalog:
    """The packaged GPU catalog (parsed once per process; the data is immutable)."""
    return gpu_catalog_from_mapping(tomllib.loads(_read(GPUS_FILE)))


@cache
def load_model_catalog() -> ModelCatalog:
    """The packaged model-architecture catalog (parsed once per process)."""
    return model_catalog_from_mapping(tomllib.loads(_read(MODELS_FILE)))
