"""The domain package stays pure: no I/O, clock, network or framework imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpux_estimator as domain

pytestmark = pytest.mark.unit

FORBIDDEN = {
    "asyncpg", "faststream", "fastapi", "redis", "aiokafka", "httpx", "requests", "socket",
    "os", "io", "pathlib", "time", "datetime", "random", "importlib", "tomllib", "subprocess",
    "gpux_platform", "pydantic",
}  # fmt: skip


def test_domain_modules_import_nothing_impure() -> None:
    package = Path(domain.__file__).parent
    offenders = []
    for module in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{module.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert not offenders
