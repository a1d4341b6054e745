"""The pure estimator: GPU specs, model shapes, fit rule, VRAM estimate, job time and cost.

Nothing here performs I/O or reads a clock; the catalog service loads its data files
(``gpux_catalog.adapters.files``).
"""

from gpux_estimator.errors import (
    CatalogDataError,
    CatalogError,
    InvalidInputError,
    UnknownItemError,
)
from gpux_estimator.estimator import (
    ESTIMATOR_CONSTANTS,
    EstimatorConstants,
    GpuHeadroom,
    MemoryBreakdown,
    Method,
    Optimizer,
    TargetModules,
    TrainingSettings,
    check_gpus,
    estimate_memory,
    gpus_that_fit,
    headroom,
    lora_params,
)
from gpux_estimator.fit import FIT_RULE, Fit, FitRule, fit_for_gpu, fit_for_memory
from gpux_estimator.gpus import GpuCatalog, GpuSpec, gpu_catalog_from_mapping
from gpux_estimator.jobs import (
    JOB_CONSTANTS,
    Dataset,
    JobConstants,
    JobEstimate,
    Price,
    RankedGpu,
    estimate_job,
    rank_gpus_for_job,
    training_flops,
)
from gpux_estimator.models import (
    ModelArch,
    ModelCatalog,
    custom_model,
    model_catalog_from_mapping,
)

__all__ = [
    "ESTIMATOR_CONSTANTS",
    "FIT_RULE",
    "JOB_CONSTANTS",
    "CatalogDataError",
    "CatalogError",
    "Dataset",
    "EstimatorConstants",
    "Fit",
    "FitRule",
    "GpuCatalog",
    "GpuHeadroom",
    "GpuSpec",
    "InvalidInputError",
    "JobConstants",
    "JobEstimate",
    "MemoryBreakdown",
    "Method",
    "ModelArch",
    "ModelCatalog",
    "Optimizer",
    "Price",
    "RankedGpu",
    "TargetModules",
    "TrainingSettings",
    "UnknownItemError",
    "check_gpus",
    "custom_model",
    "estimate_job",
    "estimate_memory",
    "fit_for_gpu",
    "fit_for_memory",
    "gpu_catalog_from_mapping",
    "gpus_that_fit",
    "headroom",
    "lora_params",
    "model_catalog_from_mapping",
    "rank_gpus_for_job",
    "training_flops",
]
