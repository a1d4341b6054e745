"""The engine package stays pure: no I/O, framework or clock, and it never reads the time.

``datetime`` is allowed for converting the instants callers pass in; calling ``now()``,
``today()`` or ``utcnow()`` is not, nor is anything from ``time`` or ``random``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpux_matching import domain

pytestmark = pytest.mark.unit

FORBIDDEN_MODULES = {
    "asyncpg", "faststream", "fastapi", "redis", "aiokafka", "httpx", "requests", "socket",
    "os", "io", "pathlib", "time", "random", "secrets", "uuid", "importlib", "subprocess",
    "threading", "asyncio", "logging", "gpux_platform", "pydantic", "sortedcontainers",
}  # fmt: skip
CLOCK_READS = {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"}


def modules() -> list[Path]:
    return sorted(Path(domain.__file__).parent.glob("*.py"))


@pytest.mark.parametrize("module", modules(), ids=lambda p: p.name)
def test_domain_modules_import_nothing_impure(module: Path) -> None:
    offenders = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        offenders += [n for n in names if n.split(".")[0] in FORBIDDEN_MODULES]
    assert not offenders


@pytest.mark.parametrize("module", modules(), ids=lambda p: p.name)
def test_domain_modules_never_read_the_clock(module: Path) -> None:
    calls = [
        node.func.attr
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCK_READS
    ]
    assert not calls
