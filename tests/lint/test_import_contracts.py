"""The layer contracts of `make lint` catch a violation: a domain that imports a driver.

The check runs the real `lint-imports` with the real configuration (pyproject.toml) over a
copy of one service in which the domain imports asyncpg; the copy comes first on the path,
so it is the package import-linter reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpux_billing

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    if pythonpath is not None:
        env["PYTHONPATH"] = f"{pythonpath}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_domain_importing_a_database_driver_breaks_the_lint(tmp_path: Path) -> None:
    source = Path(gpux_billing.__file__).parent
    copy = tmp_path / "gpux_billing"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    domain = copy / "domain" / "__init__.py"
    domain.write_text(domain.read_text(encoding="utf-8") + "\nimport asyncpg  # the violation\n")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout
    broken = [line for line in result.stdout.splitlines() if "BROKEN" in line]
    assert any(line.startswith("Domains are pure") for line in broken), result.stdout
    assert "gpux_billing.domain -> asyncpg" in result.stdout
