"""Generate ``gpux_sdk`` (libs/sdk/src) from the gateway's OpenAPI document (``make sdk``).

The client is a pure function of its inputs: ``web/openapi.json``, the generator's config
(``libs/sdk/openapi-python-client.yaml``), this script, and the versions of
openapi-python-client and ruff (its post hooks format the code; both pinned in the
workspace's ``dev`` group). The generator writes it into a fresh folder, which then replaces
the package, and one SHA-256 of all the inputs is kept beside it (``inputs.sha256``) so that
a later run knows whether the client is current.

- ``python scripts/sdk.py``: generate when an input changed since the last generation
  (``--force``: always).
- ``python scripts/sdk.py --check``: write nothing; exit 1 unless the package was generated
  from the current inputs.
- ``python scripts/sdk.py --out DIR``: generate into ``DIR`` instead (the determinism test).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "web" / "openapi.json"
CONFIG = ROOT / "libs" / "sdk" / "openapi-python-client.yaml"
PACKAGE = ROOT / "libs" / "sdk" / "src" / "gpux_sdk"
SCRIPT = Path(__file__).resolve()
STAMP = "inputs.sha256"
FILES = (DOCUMENT, CONFIG, SCRIPT)
"""The files the client is generated from (this script's own text included)."""
TOOLS = ("openapi-python-client", "ruff")
"""The tools that write it, by their installed version."""


def tool_version(name: str) -> str:
    """The installed version of ``name`` ("missing" when it is not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def inputs_digest(files: tuple[Path, ...] = FILES, tools: dict[str, str] | None = None) -> str:
    """One SHA-256 of everything the client is generated from: each file's name and bytes,
    each tool's name and version."""
    versions = tools if tools is not None else {name: tool_version(name) for name in TOOLS}
    digest = hashlib.sha256()
    for path in files:
        content = path.read_bytes()
        digest.update(f"{path.name}\0{len(content)}\0".encode())
        digest.update(content)
    for name, version in sorted(versions.items()):
        digest.update(f"{name}\0{version}\0".encode())
    return digest.hexdigest()


def is_current(package: Path = PACKAGE) -> bool:
    """Whether ``package`` was generated from the current inputs."""
    stamp = package / STAMP
    return stamp.is_file() and stamp.read_text().strip() == inputs_digest()


def generate(target: Path) -> None:
    """Generate the client into ``target`` (replaced whole), stamped with its inputs' hash."""
    generator = Path(sys.executable).with_name("openapi-python-client")
    with tempfile.TemporaryDirectory(prefix="gpux-sdk-") as scratch:
        out = Path(scratch) / "gpux_sdk"
        subprocess.run(  # noqa: S603  # our own pinned tool, our own arguments
            [
                str(generator),
                "generate",
                "--path",
                str(DOCUMENT),
                "--config",
                str(CONFIG),
                "--meta",
                "none",
                "--output-path",
                str(out),
            ],
            check=True,
            cwd=scratch,
            stdout=subprocess.DEVNULL,
            # its post hooks run the workspace's ruff, beside this interpreter
            env={**os.environ, "PATH": f"{generator.parent}{os.pathsep}{os.environ['PATH']}"},
        )
        (out / "py.typed").touch()  # a typed package, for mypy outside the workspace too
        (out / STAMP).write_text(inputs_digest() + "\n")
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(out), str(target))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless current")
    parser.add_argument("--force", action="store_true", help="generate even when current")
    parser.add_argument("--out", type=Path, help="generate into this folder instead")
    args = parser.parse_args(argv)
    if args.check:
        if is_current():
            return 0
        print(
            f"sdk: {PACKAGE} is not generated from the current {DOCUMENT.relative_to(ROOT)},"
            f" {CONFIG.relative_to(ROOT)}, scripts/sdk.py and tools; run `make sdk`",
            file=sys.stderr,
        )
        return 1
    if args.out is not None:
        generate(args.out)
    elif args.force or not is_current():
        generate(PACKAGE)
        print(f"sdk: generated {PACKAGE.relative_to(ROOT)} from {DOCUMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
