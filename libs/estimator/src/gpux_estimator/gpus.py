"""GPU specifications: vendor datasheet figures as immutable, versioned domain objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from gpux_estimator import _fields as f
from gpux_estimator._catalog import Catalog


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU model's datasheet figures (tensor throughput dense, without sparsity)."""

    id: str
    name: str
    vendor: str
    architecture: str
    memory_gb: float
    memory_type: str
    bandwidth_gb_s: float
    bf16_tflops: float
    fp16_tflops: float
    fp8_tflops: float | None
    tdp_w: int
    form_factor: str
    interconnect: str
    source: str


@dataclass(frozen=True, slots=True)
class GpuCatalog(Catalog[GpuSpec]):
    """A versioned, ordered set of GPU specs with unique ids and names."""

    kind: ClassVar[str] = "GPU"
    unique: ClassVar[tuple[str, ...]] = ("id", "name")
    version: int
    gpus: tuple[GpuSpec, ...]

    def _items(self) -> tuple[GpuSpec, ...]:
        return self.gpus

    def by_name(self, name: str) -> GpuSpec | None:
        """The GPU whose vendor name (as on the product page) is ``name``, if any."""
        return next((gpu for gpu in self.gpus if gpu.name == name), None)


def gpu_spec_from_row(gpu_id: str, row: Mapping[str, Any]) -> GpuSpec:
    """Build one GpuSpec from its data-table row, validating every field."""
    where = f"GPU {gpu_id!r}"
    return GpuSpec(
        id=f.slug(gpu_id, where),
        name=f.text(row, "name", where),
        vendor=f.text(row, "vendor", where),
        architecture=f.text(row, "architecture", where),
        memory_gb=f.number(row, "memory_gb", where),
        memory_type=f.text(row, "memory_type", where),
        bandwidth_gb_s=f.number(row, "bandwidth_gb_s", where),
        bf16_tflops=f.number(row, "bf16_tflops", where),
        fp16_tflops=f.number(row, "fp16_tflops", where),
        fp8_tflops=f.optional_number(row, "fp8_tflops", where),
        tdp_w=f.integer(row, "tdp_w", where),
        form_factor=f.text(row, "form_factor", where),
        interconnect=f.text(row, "interconnect", where),
        source=f.text(row, "source", where),
    )


def gpu_catalog_from_mapping(data: Mapping[str, Any]) -> GpuCatalog:
    """Build the catalog from the parsed gpus.toml document (``version`` + ``[gpus.<id>]``)."""
    version, rows = f.versioned_rows(data, "gpus", "gpus.toml", items="GPUs")
    return GpuCatalog(version=version, gpus=tuple(gpu_spec_from_row(i, row) for i, row in rows))
