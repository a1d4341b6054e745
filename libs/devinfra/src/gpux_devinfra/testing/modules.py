"""Python files that are no importable module: a script of scripts/, or a helper beside tests
in a folder that is no package (tests run with ``--import-mode=importlib``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_path(name: str, path: Path) -> ModuleType:
    """The file at ``path`` as the module ``name``, loaded on the first call and registered in
    ``sys.modules`` before it runs (dataclasses look their module up while it loads)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
