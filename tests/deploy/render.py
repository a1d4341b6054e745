"""A small kustomize renderer for deploy/k8s, so its test runs where no kustomize binary is.

It implements only what deploy/k8s uses, in kustomize's order, and refuses anything else
rather than guess:

- ``resources``: YAML files and directories holding a kustomization (built recursively);
- ``patches``: strategic-merge patches from a file, applied to the object they name or to
  every object their ``target`` selects (kind, name, group, version, namespace);
- ``namespace``, ``labels`` (``pairs`` on metadata.labels only), ``replicas``, ``images``.

Strategic merge here knows the merge keys of the lists our patches touch (containers by
name, env by name, volumes by name, ...); every other list is replaced, as kustomize does for
lists without a merge key. Custom resources get a JSON merge patch (RFC 7386), which is what
kustomize applies to kinds it has no schema for. When ``kubectl`` or ``kustomize`` is on PATH
the test renders with it too and requires the same objects.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# Kinds with a built-in schema: patched by strategic merge. Everything else is a custom
# resource and gets a JSON merge patch.
BUILTIN_GROUPS = {"", "apps", "autoscaling", "policy", "networking.k8s.io", "batch"}

# (list field name) -> merge key, for the lists of built-in kinds our patches may touch.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
}

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}
SCALABLE = {"Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"}

KNOWN_FIELDS = {
    "apiVersion",
    "kind",
    "resources",
    "patches",
    "namespace",
    "labels",
    "replicas",
    "images",
}


class RenderError(RuntimeError):
    """A kustomization uses something this renderer does not implement, or is inconsistent."""


def group_of(obj: Obj) -> str:
    """The API group of an object ("" for the core group)."""
    api_version = obj.get("apiVersion", "")
    return api_version.split("/")[0] if "/" in api_version else ""


def object_id(obj: Obj) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): what kustomize considers one object."""
    meta = obj.get("metadata", {})
    return (group_of(obj), obj["kind"], meta.get("namespace", ""), meta["name"])


def load_yaml_documents(path: Path) -> list[Obj]:
    """The non-empty documents of a YAML file."""
    with path.open() as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]


def build(directory: Path) -> list[Obj]:
    """Render the kustomization in ``directory`` to a list of objects."""
    kustomization = _read_kustomization(directory)
    objects: list[Obj] = []
    for entry in kustomization.get("resources", []):
        path = (directory / entry).resolve()
        objects.extend(build(path) if path.is_dir() else load_yaml_documents(path))
    _check_unique(objects, directory)
    # kustomize's order of built-in transformers: patches, namespace, labels, replicas, images.
    for patch in kustomization.get("patches", []):
        _apply_patch(objects, patch, directory)
    if "namespace" in kustomization:
        _set_namespace(objects, kustomization["namespace"])
    for labels in kustomization.get("labels", []):
        _add_labels(objects, labels)
    for replica in kustomization.get("replicas", []):
        _set_replicas(objects, replica)
    for image in kustomization.get("images", []):
        _set_image(objects, image)
    _check_unique(objects, directory)
    return objects


def _read_kustomization(directory: Path) -> Obj:
    for name in KUSTOMIZATION_FILES:
        path = directory / name
        if path.exists():
            data = yaml.safe_load(path.read_text()) or {}
            unknown = set(data) - KNOWN_FIELDS
            if unknown:
                raise RenderError(f"{path}: not implemented here: {sorted(unknown)}")
            return data
    raise RenderError(f"{directory}: no kustomization file")


def _check_unique(objects: list[Obj], directory: Path) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for obj in objects:
        key = object_id(obj)
        if key in seen:
            raise RenderError(f"{directory}: {key} defined twice")
        seen.add(key)


def _apply_patch(objects: list[Obj], entry: Obj, directory: Path) -> None:
    if set(entry) - {"path", "target"}:
        raise RenderError(f"patch {entry}: only 'path' and 'target' are implemented")
    documents = load_yaml_documents(directory / entry["path"])
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise RenderError(f"{entry['path']}: one strategic-merge patch object expected")
    patch = documents[0]
    target = entry.get("target")
    if target is None:
        selected = [
            obj
            for obj in objects
            if obj["kind"] == patch["kind"] and obj["metadata"]["name"] == patch["metadata"]["name"]
        ]
    else:
        selected = [obj for obj in objects if _selected(obj, target)]
    if not selected:
        raise RenderError(f"{entry['path']}: the patch matches no object")
    # A targeted patch's own name is a placeholder: the target says which objects it patches.
    body = copy.deepcopy(patch)
    body.get("metadata", {}).pop("name", None)
    body.get("metadata", {}).pop("namespace", None)
    for obj in selected:
        strategic = group_of(obj) in BUILTIN_GROUPS
        merged = _merge(obj, body, strategic)
        obj.clear()
        obj.update(merged)


def _selected(obj: Obj, target: Obj) -> bool:
    unknown = set(target) - {"kind", "name", "group", "version", "namespace"}
    if unknown:
        raise RenderError(f"target {target}: not implemented here: {sorted(unknown)}")
    version = obj["apiVersion"].split("/")[-1]
    checks = {
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "group": group_of(obj),
        "version": version,
        "namespace": obj["metadata"].get("namespace", ""),
    }
    # kustomize reads target fields as anchored regular expressions.
    return all(re.fullmatch(str(target[key]), checks[key]) for key in target)


def _merge(base: Any, patch: Any, strategic: bool, field: str = "") -> Any:
    if isinstance(patch, dict):
        if "$patch" in patch or any(k.startswith("$") for k in patch):
            raise RenderError(f"patch directives are not implemented: {sorted(patch)}")
        result = copy.deepcopy(base) if isinstance(base, dict) else {}
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = _merge(result.get(key), value, strategic, key)
        return result
    if isinstance(patch, list) and strategic and field in MERGE_KEYS and isinstance(base, list):
        return _merge_list(base, patch, MERGE_KEYS[field])
    return copy.deepcopy(patch)


def _merge_list(base: list[Any], patch: list[Any], key: str) -> list[Any]:
    result = copy.deepcopy(base)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise RenderError(f"list item without its merge key {key!r}: {item}")
        for index, existing in enumerate(result):
            if existing.get(key) == item[key]:
                result[index] = _merge(existing, item, True)
                break
        else:
            result.append(copy.deepcopy(item))
    return result


def _set_namespace(objects: list[Obj], namespace: str) -> None:
    for obj in objects:
        if obj["kind"] == "Namespace":
            if obj["metadata"]["name"] != namespace:
                raise RenderError("a Namespace object other than the kustomization's namespace")
            continue
        if obj["kind"] not in CLUSTER_SCOPED:
            obj["metadata"]["namespace"] = namespace


def _add_labels(objects: list[Obj], entry: Obj) -> None:
    if entry.get("includeSelectors") or entry.get("includeTemplates") or entry.get("fields"):
        raise RenderError("labels: only pairs on metadata.labels are implemented")
    for obj in objects:
        obj["metadata"].setdefault("labels", {}).update(entry["pairs"])


def _set_replicas(objects: list[Obj], entry: Obj) -> None:
    matched = [
        o for o in objects if o["kind"] in SCALABLE and o["metadata"]["name"] == entry["name"]
    ]
    if not matched:
        raise RenderError(f"replicas: no workload named {entry['name']}")
    for obj in matched:
        obj["spec"]["replicas"] = entry["count"]


def split_image(image: str) -> tuple[str, str]:
    """(name, suffix): ``ghcr.io/a/b:1.0`` -> (``ghcr.io/a/b``, ``:1.0``); digests likewise."""
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, "@" + digest
    head, sep, tail = image.rpartition(":")
    if sep and "/" not in tail:
        return head, ":" + tail
    return image, ""


def _set_image(objects: list[Obj], entry: Obj) -> None:
    if set(entry) - {"name", "newName", "newTag", "digest"}:
        raise RenderError(f"images: not implemented here: {entry}")
    for obj in objects:
        pod = obj.get("spec", {}).get("template", {}).get("spec", {})
        for container in [*pod.get("containers", []), *pod.get("initContainers", [])]:
            name, suffix = split_image(container["image"])
            if name != entry["name"]:
                continue
            if "digest" in entry:
                suffix = "@" + entry["digest"]
            elif "newTag" in entry:
                suffix = ":" + str(entry["newTag"])
            container["image"] = entry.get("newName", name) + suffix


def kustomize_command() -> list[str] | None:
    """A kustomize that can build offline: the standalone binary or kubectl's, if installed."""
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


def build_with_binary(directory: Path, command: list[str]) -> list[Obj]:
    """Render with a real kustomize (no network is needed for local bases)."""
    done = subprocess.run(
        [*command, str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RenderError(f"{' '.join(command)} {directory}: {done.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]
