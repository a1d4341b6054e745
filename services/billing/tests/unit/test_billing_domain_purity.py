"""The billing domain stays pure: no I/O, framework or driver imports, and no clock reads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpux_billing import domain

pytestmark = pytest.mark.unit

FORBIDDEN_IMPORTS = {
    "asyncpg", "faststream", "fastapi", "redis", "aiokafka", "httpx", "requests", "socket",
    "os", "io", "pathlib", "time", "random", "importlib", "subprocess", "pydantic",
}  # fmt: skip
# datetime is imported for its types only; these calls would read the clock.
CLOCK_CALLS = {"now", "utcnow", "today", "time", "monotonic"}
# Money rules and the contracts' enums (data, no I/O) are all the domain takes from common.
ALLOWED_COMMON = {
    "gpux_contracts.money",
    "gpux_contracts.leases",
    "gpux_contracts.offers",
}


def modules() -> list[Path]:
    return sorted(Path(domain.__file__).parent.glob("*.py"))


def test_domain_modules_import_nothing_impure() -> None:
    offenders = []
    for module in modules():
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                if root in FORBIDDEN_IMPORTS or (
                    root == "gpux_platform" and name not in ALLOWED_COMMON
                ):
                    offenders.append(f"{module.name}: {name}")
    assert not offenders


def test_domain_modules_read_no_clock() -> None:
    offenders = [
        f"{module.name}:{node.lineno}"
        for module in modules()
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCK_CALLS
    ]
    assert not offenders
