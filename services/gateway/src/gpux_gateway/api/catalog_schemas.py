"""Deprecated: ``gpux_gateway.catalog.schemas``."""

from gpux_gateway.catalog.schemas import EstimateIn, GpuList, GpuOut

__all__ = ["EstimateIn", "GpuList", "GpuOut"]
