"""Deprecated import path, kept only while other packages' tests still use it.

Import ``gpux_catalog.adapters.files`` instead; this module goes once they do.
"""

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog

__all__ = ["load_gpu_catalog", "load_model_catalog"]
