"""No domain reads the clock: time comes in as an argument (STYLE.md, habit 1).

import-linter's "Domains are pure" contract keeps I/O, drivers, ``time`` and ``random`` out of
every domain package; what imports cannot show is a call of ``datetime``'s own clock, which
this test looks for in every domain module (and the pure estimator).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
CLOCK_READS = {"now", "utcnow", "today"}  # fromtimestamp converts a given instant
PURE = sorted(
    [
        *ROOT.glob("services/*/src/gpux_*/domain/**/*.py"),
        *ROOT.glob("libs/estimator/src/gpux_estimator/**/*.py"),
    ]
)


def clock_reads(module: Path) -> list[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return [
        f"{module.name}:{node.lineno} {node.func.attr}()"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCK_READS
    ]


def test_every_service_has_a_domain_to_check() -> None:
    services = {p.relative_to(ROOT).parts[1] for p in PURE if p.parts[-4:-3] != ("libs",)}
    assert {"billing", "catalog", "gateway", "matching", "pricing"} <= services


@pytest.mark.parametrize("module", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_domain_module_reads_the_clock(module: Path) -> None:
    assert clock_reads(module) == []


def test_the_check_sees_a_clock_read(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from datetime import UTC, datetime\n\n\ndef f():\n    return datetime.now(UTC)\n"
    )
    assert clock_reads(sample) == ["sample.py:5 now()"]
