"""Fails when a function or method of ours is longer than the house limit (STYLE.md: ~60 lines).

Counted from its ``def`` line to its last line, decorators and docstring included; tests are
held to the same limit as the code they test. The one exception is a measured hot path kept
in one piece on purpose: its ``def`` line says so with ``# long: <why>`` (the matching
engine's order walk, where a call per fill shows in the tail latency).
Usage: ``python scripts/function_length.py``.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

LIMIT = 60
ROOT = Path(__file__).resolve().parent.parent


def python_files() -> list[Path]:
    """The repository's tracked Python files."""
    git = shutil.which("git") or "git"
    out = subprocess.run(  # noqa: S603 - a fixed git command, no input of anyone's
        [git, "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [ROOT / line for line in out.splitlines() if line]


def too_long(path: Path) -> list[str]:
    """``path:line name (N lines)`` for each function over the limit."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > LIMIT and "# long: " not in lines[node.lineno - 1]:
                found.append(f"{path.relative_to(ROOT)}:{start} {node.name} ({length} lines)")
    return found


def main() -> int:
    """Print every function over the limit; exit 1 if there is one."""
    found = [line for path in python_files() if path.exists() for line in too_long(path)]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} function(s) over {LIMIT} lines: split them by concept")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
