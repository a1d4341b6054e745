"""The gateway's catalog comes from Kafka alone: it never reads the catalog's data files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpux_gateway

pytestmark = pytest.mark.unit


def test_the_gateway_never_reads_the_catalog_data_files() -> None:
    # Its catalog comes from Kafka alone; the packaged TOML belongs to the catalog service.
    package = Path(gpux_gateway.__file__).parent
    offenders = []
    for module in package.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                bad = [n for n in names if n.startswith(("gpux_catalog.specs", "tomllib"))]
                offenders += [f"{module.name}: {n}" for n in bad]
            if isinstance(node, ast.Import):
                offenders += [
                    f"{module.name}: {a.name}"
                    for a in node.names
                    if a.name.startswith(("gpux_catalog.specs", "tomllib"))
                ]
    assert not offenders
