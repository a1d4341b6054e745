"""Deprecated: ``gpux_gateway.catalog.service``."""

from gpux_gateway.catalog.service import estimate

__all__ = ["estimate"]
