"""Renders deploy/k8s with the real kustomize, and validates with the real kubeconform.

Both tools and every schema come from ``scripts/k8s_tools.py`` (pinned versions, fetched
from the package registries into ``.gpux/k8s-tools`` on first use; later runs reuse them).
The prod overlay's secretGenerator reads files that only the secret store writes, so an
overlay is rendered from a copy of deploy/k8s in which each of those files holds stand-in
values (``STANDINS``, by the Secret's name), never anything committed.
"""

from __future__ import annotations

import atexit
import base64
import functools
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from gpux_devinfra.testing.modules import load_path

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"

# kustomize's name suffix of generated objects: a dash and 10 of these characters.
HASH_SUFFIX = re.compile(r"-[bcdfghkmt2456789]{10}$")

# Stand-in contents of the secret store's files, by the Secret's name (a pattern).
STANDINS: tuple[tuple[str, dict[str, str]], ...] = (
    (r"gpux-pg-role-(\w+)-migrator", {"username": r"\1_migrator", "password": "pw-m"}),
    (r"gpux-pg-role-(\w+)", {"username": r"\1", "password": "pw"}),
    (r"gpux-(\w+)-migrate-db", {"url": r"postgresql://\1_migrator:pw-m@gpux-pg-rw:5432/gpux"}),
    (r"gpux-(\w+)-db", {"url": r"postgresql://\1:pw@gpux-pg-rw:5432/gpux"}),
    (
        r"gpux-gateway-secrets",
        {
            "key-pepper": "a-pepper-from-the-secret-store",
            "admin-key": "an-admin-key-" + "0" * 32,
            "access-keys": "k1:" + base64.b64encode(b"k" * 32).decode(),
        },
    ),
    (r"gpux-backup-s3", {"ACCESS_KEY_ID": "key-id", "ACCESS_SECRET_KEY": "secret-key"}),
)


class RenderError(RuntimeError):
    """kustomize refused an overlay."""


# scripts/ is no package: load the fetcher by path (it is also run as a script).
k8s_tools = load_path("gpux_k8s_tools", ROOT / "scripts" / "k8s_tools.py")


@functools.cache
def tools() -> Any:
    """kustomize, kubeconform and the schemas (``k8s_tools.Tools``), fetched once."""
    return k8s_tools.ensure()


def standin(secret: str) -> dict[str, str]:
    """What the secret store would hold for that Secret, made up."""
    for pattern, values in STANDINS:
        match = re.fullmatch(pattern, secret)
        if match:
            return {key: match.expand(value) for key, value in values.items()}
    raise RenderError(f"no stand-in for the Secret {secret}: add one to render.STANDINS")


def missing_env_files(overlay: Path) -> dict[Path, str]:
    """The secretGenerator's env files an overlay reads that are not in the tree, by Secret."""
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    missing: dict[Path, str] = {}
    for entry in kustomization.get("secretGenerator", []):
        for name in entry.get("envs", []):
            if not (overlay / name).exists():
                missing[overlay / name] = entry["name"]
    return missing


@functools.cache
def _tree() -> Path:
    """A copy of deploy/k8s with every missing secret file written from the stand-ins."""
    scratch = Path(tempfile.mkdtemp(prefix="gpux-k8s-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    copy = scratch / "k8s"
    shutil.copytree(K8S, copy)
    for overlay in (copy / "overlays").iterdir():
        for path, secret in missing_env_files(overlay).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{k}={v}\n" for k, v in standin(secret).items()))
    return copy


def kustomize(directory: Path) -> str:
    """``kustomize build`` of a directory: the YAML stream."""
    done = subprocess.run(
        [str(tools().kustomize), "build", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RenderError(f"kustomize build {directory}: {done.stderr.strip()}")
    return done.stdout


def overlay_dir(overlay: str) -> Path:
    """The overlay's directory in the copy that holds the stand-in secret files."""
    return _tree() / "overlays" / overlay


@functools.cache
def build_text(overlay: str) -> str:
    """The overlay rendered by kustomize (with stand-in secret files where prod needs them)."""
    return kustomize(overlay_dir(overlay))


def build(overlay: str) -> list[Obj]:
    """The overlay's objects."""
    return [doc for doc in yaml.safe_load_all(build_text(overlay)) if doc]


def kubeconform(stream: str) -> tuple[int, list[Obj]]:
    """kubeconform -strict over a YAML stream: its exit code and its results (one per object)."""
    done = subprocess.run(
        [*tools().kubeconform_command(), "-"],
        input=stream,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise RenderError(f"kubeconform said: {done.stdout}{done.stderr}") from exc
    return done.returncode, list(report.get("resources", []))


def base_name(name: str) -> str:
    """A generated object's name without kustomize's hash suffix."""
    return HASH_SUFFIX.sub("", name)


def object_id(obj: Obj) -> tuple[str, str, str]:
    """(apiVersion, kind, name): what a test calls one object."""
    return obj["apiVersion"], obj["kind"], obj["metadata"]["name"]


def split_image(image: str) -> tuple[str, str]:
    """(name, suffix): ``ghcr.io/a/b:1.0`` -> (``ghcr.io/a/b``, ``:1.0``); digests likewise."""
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, "@" + digest
    head, sep, tail = image.rpartition(":")
    if sep and "/" not in tail:
        return head, ":" + tail
    return image, ""
