"""The Python SDK is generated from the committed OpenAPI document, and only from it.

The installed package is checked against what its inputs generate now (a fresh generation
compared file by file): the check of drift that holds even after bootstrap regenerated it
(CI's bootstrap says when it had to), and of determinism. The stamp names every input: the
document, the generator's config, scripts/sdk.py, and openapi-python-client's and ruff's
versions.
"""

from __future__ import annotations

import filecmp
import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpux_sdk_script", ROOT / "scripts" / "sdk.py")
assert _spec is not None
assert _spec.loader is not None
sdk = importlib.util.module_from_spec(_spec)
sys.modules["gpux_sdk_script"] = sdk
_spec.loader.exec_module(sdk)


def _differences(left: Path, right: Path) -> list[str]:
    compared = filecmp.dircmp(left, right)
    found = [*compared.left_only, *compared.right_only, *compared.diff_files, *compared.funny_files]
    for name, sub in compared.subdirs.items():
        found.extend(f"{name}/{d}" for d in _differences(Path(sub.left), Path(sub.right)))
    return found


def test_the_installed_sdk_is_what_its_inputs_generate_now(tmp_path: Path) -> None:
    sdk.generate(tmp_path / "gpux_sdk")
    assert _differences(tmp_path / "gpux_sdk", sdk.PACKAGE) == [], "stale: run `make sdk`"


def test_the_stamp_changes_with_every_input(tmp_path: Path) -> None:
    files = []
    for source in sdk.FILES:
        copy = tmp_path / source.name
        copy.write_bytes(source.read_bytes())
        files.append(copy)
    tools = {name: sdk.tool_version(name) for name in sdk.TOOLS}
    assert "missing" not in tools.values()
    stamp = sdk.inputs_digest(tuple(files), tools)
    assert stamp == sdk.inputs_digest()  # the same bytes and versions as the real ones
    changed = set()
    for copy in files:
        original = copy.read_bytes()
        copy.write_bytes(original + b"\n")
        changed.add(sdk.inputs_digest(tuple(files), tools))
        copy.write_bytes(original)
    for name in sdk.TOOLS:
        changed.add(sdk.inputs_digest(tuple(files), {**tools, name: "0.0.1"}))
    assert stamp not in changed
    assert len(changed) == len(files) + len(sdk.TOOLS)


def test_a_changed_document_makes_the_sdk_stale(tmp_path: Path) -> None:
    copy = tmp_path / "gpux_sdk"
    copy.mkdir()
    (copy / sdk.STAMP).write_text("0" * 64 + "\n")
    assert not sdk.is_current(copy)


def test_every_operation_of_the_document_has_a_module() -> None:
    document = json.loads(sdk.DOCUMENT.read_text())
    operations = {
        operation["operationId"]
        for item in document["paths"].values()
        for operation in item.values()
    }
    modules = {p.stem for p in (sdk.PACKAGE / "api").rglob("*.py") if p.stem != "__init__"}
    assert operations <= modules
