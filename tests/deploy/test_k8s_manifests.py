"""deploy/k8s: every overlay renders, validates offline, and says what the system needs.

Core objects are validated with kubernetes-validate (the newest bundled Kubernetes schema,
strict: unknown fields fail). The custom resources (Strimzi Kafka, KafkaNodePool, KafkaTopic;
CloudNativePG Cluster) are validated against the small hand-written schemas in
``schemas/``, which cover the fields we use and refuse the rest. The KafkaTopics must be the
topic registry of libs/platform, and the services' settings must parse with their real
settings classes. A service may run in a second Deployment in one of its roles (the
gateway's views: its image and database, a port of its own, no Service). Rendering uses
``render.py``; where a kustomize binary is installed, its output must be the same objects.
Matching's autoscaler stops where its consumers would idle: that test wires the service to
read what it subscribes to, so it needs the infrastructure (marked integration; everything
else here is unit, see conftest.py).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from referencing import Registry, Resource

from gpux_contracts.topics import OFFERS_COMMANDS, REGISTRY, by_name
from gpux_devinfra.testing.services import subscriptions
from gpux_platform.service import ServiceSpec
from gpux_platform.settings import GpuxSettings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("dev", "prod")


# Every service of the workspace, by name.
SERVICES = tuple(
    path.name
    for path in sorted((ROOT / "services").iterdir())
    if (path / "pyproject.toml").is_file()
)


# Deployments that run a service in one of its roles, beside the service's own: name ->
# (service, the role's settings, its port).
ROLES: dict[str, tuple[str, dict[str, str], int]] = {
    "gateway-views": ("gateway", {"GPUX_GATEWAY_ROLE": "views"}, 8105),
}

# The service each Deployment runs, by Deployment name (without gpux-).
WORKLOADS = {**{name: name for name in SERVICES}, **{n: r[0] for n, r in ROLES.items()}}


@functools.cache
def spec(name: str) -> ServiceSpec:
    """The service's ``gpux_<name>.bootstrap.SPEC`` (imported when a test needs it)."""
    found = importlib.import_module(f"gpux_{name}.bootstrap").SPEC
    assert isinstance(found, ServiceSpec), name
    return found


def http_port(name: str) -> int:
    """The service's HTTP port: its settings' default (docs/ARCHITECTURE.md lists them)."""
    port = spec(name).settings_type.model_fields["http_port"].default
    assert isinstance(port, int), name
    return port


CUSTOM_SCHEMAS = {
    ("kafka.strimzi.io/v1beta2", "Kafka"): "kafka.json",
    ("kafka.strimzi.io/v1beta2", "KafkaNodePool"): "kafkanodepool.json",
    ("kafka.strimzi.io/v1beta2", "KafkaTopic"): "kafkatopic.json",
    ("postgresql.cnpg.io/v1", "Cluster"): "cluster.json",
}

Obj = dict[str, Any]


def _load_render() -> ModuleType:
    # Tests run with --import-mode=importlib and tests/ is no package: load the helper by path.
    spec = importlib.util.spec_from_file_location("gpux_k8s_render", HERE / "render.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


render = _load_render()


@functools.cache
def rendered(overlay: str) -> tuple[Obj, ...]:
    objects: list[Obj] = render.build(K8S / "overlays" / overlay)
    return tuple(objects)


def of_kind(overlay: str, kind: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in rendered(overlay) if o["kind"] == kind}


def app_container(deployment: Obj) -> Obj:
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["containers"]
    (container,) = containers
    return container


# --- rendering and schemas ----------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_the_whole_system(overlay: str) -> None:
    kinds = {(o["kind"], o["metadata"]["name"]) for o in rendered(overlay)}
    for name in SERVICES:
        assert ("Deployment", f"gpux-{name}") in kinds
        assert ("Service", f"gpux-{name}") in kinds
    for name in ROLES:  # nothing sends a role's pods requests: no Service
        assert ("Deployment", f"gpux-{name}") in kinds
        assert ("Service", f"gpux-{name}") not in kinds
    for expected in [
        ("Ingress", "gpux-gateway"),
        ("ConfigMap", "gpux-config"),
        ("Kafka", "gpux"),
        ("KafkaNodePool", "dual-role"),
        ("Cluster", "gpux-pg"),
        ("StatefulSet", "gpux-redis"),
        ("Service", "gpux-redis"),
    ]:
        assert expected in kinds
    namespaces = {
        o["metadata"].get("namespace") for o in rendered(overlay) if o["kind"] != "Namespace"
    }
    assert namespaces == {"gpux-dev" if overlay == "dev" else "gpux"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_renderer_agrees_with_kustomize(overlay: str) -> None:
    command = render.kustomize_command()
    if command is None:
        pytest.skip("no kustomize or kubectl on PATH; render.py alone is used")
    directory = K8S / "overlays" / overlay
    ours = {render.object_id(o): o for o in rendered(overlay)}
    theirs = {render.object_id(o): o for o in render.build_with_binary(directory, command)}
    assert sorted(ours) == sorted(theirs)
    for key, obj in ours.items():
        assert obj == theirs[key], key


@functools.cache
def _schema_registry() -> Registry:
    resources = []
    for path in sorted((HERE / "schemas").glob("*.json")):
        contents = json.loads(path.read_text())
        resources.append((path.name, Resource.from_contents(contents)))
    return Registry().with_resources(resources)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates_offline(overlay: str) -> None:
    version = kubernetes_validate.latest_version()
    for obj in rendered(overlay):
        schema_file = CUSTOM_SCHEMAS.get((obj["apiVersion"], obj["kind"]))
        if schema_file is None:
            # Raises SchemaNotFoundError for a kind Kubernetes does not know: nothing escapes.
            kubernetes_validate.validate(obj, version, strict=True)
        else:
            schema = json.loads((HERE / "schemas" / schema_file).read_text())
            validator = jsonschema.Draft202012Validator(schema, registry=_schema_registry())
            validator.validate(obj)


def test_schemas_refuse_what_they_should() -> None:
    """The custom schemas are not vacuous: a typo, a wrong enum and a missing field fail."""
    topic = json.loads(json.dumps(of_kind("prod", "KafkaTopic")[OFFERS_COMMANDS.name]))
    schema = json.loads((HERE / "schemas" / "kafkatopic.json").read_text())
    validator = jsonschema.Draft202012Validator(schema, registry=_schema_registry())
    bad_typo = {**topic, "spec": {**topic["spec"], "partitons": 6}}
    bad_enum = {**topic, "spec": {**topic["spec"], "config": {"cleanup.policy": "forever"}}}
    missing = {**topic, "spec": {k: v for k, v in topic["spec"].items() if k != "replicas"}}
    for bad in (bad_typo, bad_enum, missing):
        assert not validator.is_valid(bad)


# --- Kafka topics and infrastructure sizes ----------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kafka_topics_are_the_registry(overlay: str) -> None:
    topics = of_kind(overlay, "KafkaTopic")
    assert set(topics) == {t.name for t in REGISTRY}
    replicas, min_isr = (1, 1) if overlay == "dev" else (3, 2)
    for name, obj in topics.items():
        registered = by_name(name)
        spec = obj["spec"]
        assert spec["topicName"] == name
        assert obj["metadata"]["labels"]["strimzi.io/cluster"] == "gpux"
        assert spec["partitions"] == registered.partitions
        assert spec["replicas"] == replicas
        config = {k: str(v) for k, v in spec["config"].items()}
        assert config.pop("min.insync.replicas") == str(min_isr)
        assert config == registered.configs(), name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kafka_and_postgres_sizes(overlay: str) -> None:
    nodes, min_isr, instances = (1, 1, 1) if overlay == "dev" else (3, 2, 3)
    kafka = of_kind(overlay, "Kafka")["gpux"]
    pools = of_kind(overlay, "KafkaNodePool").values()
    brokers = sum(p["spec"]["replicas"] for p in pools if "broker" in p["spec"]["roles"])
    controllers = sum(p["spec"]["replicas"] for p in pools if "controller" in p["spec"]["roles"])
    assert brokers == nodes
    assert controllers % 2 == 1  # a KRaft quorum wants an odd number of voters
    config = kafka["spec"]["kafka"]["config"]
    assert config["auto.create.topics.enable"] is False
    assert config["min.insync.replicas"] == min_isr
    assert config["default.replication.factor"] == nodes
    assert config["offsets.topic.replication.factor"] == nodes
    assert of_kind(overlay, "Cluster")["gpux-pg"]["spec"]["instances"] == instances


def test_postgres_roles_are_the_services() -> None:
    cluster = of_kind("prod", "Cluster")["gpux-pg"]["spec"]
    roles = {r["name"]: r for r in cluster["managed"]["roles"]}
    assert set(roles) == set(SERVICES)
    for name, role in roles.items():
        assert role["login"] is True
        assert role["passwordSecret"]["name"] == f"gpux-pg-role-{name}"
    init_sql = " ".join(cluster["bootstrap"]["initdb"]["postInitApplicationSQL"])
    for name in SERVICES:
        assert f"CREATE ROLE {name} NOLOGIN" in init_sql
        assert re.search(rf"GRANT CREATE ON DATABASE gpux TO [^;]*\b{name}\b", init_sql)


# --- the services' Deployments ------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_workload_is_hardened(overlay: str) -> None:
    workloads = [
        *of_kind(overlay, "Deployment").values(),
        *of_kind(overlay, "StatefulSet").values(),
    ]
    assert workloads
    for workload in workloads:
        name = workload["metadata"]["name"]
        pod = workload["spec"]["template"]["spec"]
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True, name
        assert context["runAsUser"] > 0, name
        assert context["runAsGroup"] > 0, name
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in pod["containers"]:
            own = container["securityContext"]
            assert own["allowPrivilegeEscalation"] is False, name
            assert own["readOnlyRootFilesystem"] is True, name
            assert own["capabilities"]["drop"] == ["ALL"], name
            assert own.get("privileged", False) is False, name
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][kind]), (name, kind)
            assert container["livenessProbe"], name
            assert container["readinessProbe"], name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_runs_its_module_on_its_port(overlay: str) -> None:
    deployments = of_kind(overlay, "Deployment")
    services = of_kind(overlay, "Service")
    assert set(deployments) == {f"gpux-{n}" for n in WORKLOADS}
    for name in SERVICES:
        port = http_port(name)
        deployment = deployments[f"gpux-{name}"]
        pod = deployment["spec"]["template"]["spec"]
        container = app_container(deployment)
        assert container["command"] == ["python", "-m", f"gpux_{name}"]
        image, _ = render.split_image(container["image"])
        assert image.rsplit("/", 1)[-1] == f"gpux-{name}"
        assert container["ports"] == [{"name": "http", "containerPort": port}]
        env = {e["name"]: e for e in container["env"]}
        assert env["GPUX_HTTP_PORT"]["value"] == str(port)
        database = env["GPUX_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
        assert database == {"name": f"gpux-{name}-db", "key": "url"}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
        # Graceful shutdown: endpoints drain during the preStop sleep, then SIGTERM.
        sleep = container["lifecycle"]["preStop"]["exec"]["command"]
        assert sleep[0] == "sleep"
        assert pod["terminationGracePeriodSeconds"] >= int(sleep[1]) + 15
        # Services named gpux-* would otherwise inject GPUX_*-prefixed variables.
        assert pod["enableServiceLinks"] is False
        selector = deployment["spec"]["selector"]["matchLabels"]
        service = services[f"gpux-{name}"]["spec"]
        assert service["selector"] == selector
        assert service["ports"] == [{"name": "http", "port": port, "targetPort": "http"}]
    gateway_env = {e["name"]: e for e in app_container(deployments["gpux-gateway"])["env"]}
    for variable, key in (("GPUX_KEY_PEPPER", "key-pepper"), ("GPUX_ADMIN_KEY", "admin-key")):
        ref = gateway_env[variable]["valueFrom"]["secretKeyRef"]
        assert (ref["name"], ref["key"]) == ("gpux-gateway-secrets", key)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_role_runs_its_services_image_and_module_in_its_role(overlay: str) -> None:
    """The gateway's views run apart from its API (GPUX_GATEWAY_ROLE=views): the gateway's
    image, module and database, the gateway's probes, on a port of their own; no API secrets."""
    deployments = of_kind(overlay, "Deployment")
    for name, (service, role, port) in ROLES.items():
        own = deployments[f"gpux-{service}"]
        deployment = deployments[f"gpux-{name}"]
        container = app_container(deployment)
        theirs = app_container(own)
        assert container["command"] == theirs["command"] == ["python", "-m", f"gpux_{service}"]
        assert container["image"] == theirs["image"]
        assert container["ports"] == [{"name": "http", "containerPort": port}]
        assert port != http_port(service)
        env = {e["name"]: e for e in container["env"]}
        for variable, value in {**role, "GPUX_HTTP_PORT": str(port)}.items():
            assert env[variable]["value"] == value, (name, variable)
        assert (
            env["GPUX_DATABASE_URL"] == {e["name"]: e for e in theirs["env"]}["GPUX_DATABASE_URL"]
        )
        assert not {"GPUX_KEY_PEPPER", "GPUX_ADMIN_KEY"} & set(env), name  # it reads no key
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert container[probe] == theirs[probe], (name, probe)
        pod = deployment["spec"]["template"]["spec"]
        assert pod["enableServiceLinks"] is False
        assert (
            pod["terminationGracePeriodSeconds"]
            == own["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        )
        labels = deployment["spec"]["template"]["metadata"]
        assert labels["annotations"]["prometheus.io/port"] == str(port)
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert labels["labels"]["app.kubernetes.io/name"] == selector["app.kubernetes.io/name"]
        # The service's own Service must not send the role's pods its requests.
        service_selector = of_kind(overlay, "Service")[f"gpux-{service}"]["spec"]["selector"]
        assert not service_selector.items() <= labels["labels"].items(), name


def test_the_views_have_the_gateways_resources_where_the_gateway_has_the_defaults() -> None:
    """dev gives every Deployment the same small resources; prod gives the gateway more for
    its SSE connections and the views a consumer's (``patches/apps-resources.yaml``)."""
    dev = of_kind("dev", "Deployment")
    prod = of_kind("prod", "Deployment")
    views = app_container(dev["gpux-gateway-views"])["resources"]
    assert views == app_container(dev["gpux-gateway"])["resources"]
    views = app_container(prod["gpux-gateway-views"])["resources"]
    assert views == app_container(prod["gpux-billing"])["resources"]


# Stand-ins for the Secret values, shaped like the real ones (never the dev defaults).
SECRET_STANDINS = {
    "url": "postgresql://svc:pw@gpux-pg-rw:5432/gpux",
    "key-pepper": "a-pepper-from-the-secret-store",
    "admin-key": "an-admin-key-of-at-least-32-characters",
}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_settings_parse_with_the_services_own_classes(
    overlay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every GPUX_* variable is a real setting and its value parses (prod rules in prod)."""
    config = of_kind(overlay, "ConfigMap")["gpux-config"]["data"]
    assert config["GPUX_ENV"] == ("dev" if overlay == "dev" else "prod")
    assert config["GPUX_HTTP_HOST"] == "0.0.0.0"
    assert config["GPUX_LOG_JSON"] == "true"
    assert config["GPUX_KAFKA_BOOTSTRAP"] == "gpux-kafka-bootstrap:9092"
    for name, service in WORKLOADS.items():
        container = app_container(of_kind(overlay, "Deployment")[f"gpux-{name}"])
        assert container["envFrom"] == [{"configMapRef": {"name": "gpux-config"}}]
        environment = dict(config)
        for entry in container["env"]:
            if "value" in entry:
                environment[entry["name"]] = entry["value"]
            else:
                environment[entry["name"]] = SECRET_STANDINS[
                    entry["valueFrom"]["secretKeyRef"]["key"]
                ]
        settings_type = spec(service).settings_type
        for variable in environment:
            if variable.startswith("GPUX_"):
                assert variable[5:].lower() in settings_type.model_fields, (name, variable)
        with monkeypatch.context() as patch:
            for variable in [v for v in os.environ if v.startswith("GPUX_")]:
                patch.delenv(variable)
            for variable, value in environment.items():
                patch.setenv(variable, value)
            settings = settings_type()
        _, role, port = ROLES.get(name, (service, {}, http_port(service)))
        assert settings.http_port == port
        for variable, value in role.items():
            assert str(getattr(settings, variable[5:].lower())) == value, (name, variable)
        assert settings.env.value == config["GPUX_ENV"]


# --- scaling, disruption, exposure, secrets ---------------------------------------------


def test_prod_scaling_and_disruption_budgets() -> None:
    deployments = of_kind("prod", "Deployment")
    autoscalers = of_kind("prod", "HorizontalPodAutoscaler")
    assert set(autoscalers) == {"gpux-gateway", "gpux-matching"}
    for name, hpa in autoscalers.items():
        spec = hpa["spec"]
        assert spec["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": name,
        }
        assert [m["resource"]["name"] for m in spec["metrics"]] == ["cpu"]
        assert 2 <= spec["minReplicas"] <= spec["maxReplicas"]
        # The autoscaler owns the count; a fixed one would be reset on every apply.
        assert "replicas" not in deployments[name]["spec"], name
    for name, deployment in deployments.items():
        if name not in autoscalers:
            assert deployment["spec"]["replicas"] >= 2, name
    budgets = of_kind("prod", "PodDisruptionBudget")
    assert set(budgets) == set(deployments)
    for name, budget in budgets.items():
        assert (
            budget["spec"]["selector"]["matchLabels"]
            == deployments[name]["spec"]["selector"]["matchLabels"]
        )
        assert budget["spec"]["maxUnavailable"] == 1


@pytest.mark.integration
async def test_matching_scales_to_the_partitions_it_consumes(gpux_settings: GpuxSettings) -> None:
    """Each matching replica owns the books of the partitions its consumer groups assign it,
    so a replica beyond the largest partition count of the topics it reads in a group gets
    none and sits idle: the autoscaler stops exactly there (deploy/k8s/overlays/prod)."""
    read = await subscriptions(spec("matching"), gpux_settings)
    grouped = {s.topic for s in read if s.group is not None}
    assert grouped, read
    partitions = max(by_name(topic).partitions for topic in grouped)
    autoscaler = of_kind("prod", "HorizontalPodAutoscaler")["gpux-matching"]["spec"]
    assert autoscaler["maxReplicas"] == partitions, sorted(grouped)
    topics = of_kind("prod", "KafkaTopic")
    assert all(topics[t]["spec"]["partitions"] == by_name(t).partitions for t in grouped)


def test_dev_runs_one_of_everything() -> None:
    for name, deployment in of_kind("dev", "Deployment").items():
        assert deployment["spec"]["replicas"] == 1, name
    assert not of_kind("dev", "HorizontalPodAutoscaler")
    assert not of_kind("dev", "PodDisruptionBudget")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ingress_exposes_only_the_api(overlay: str) -> None:
    ingress = of_kind(overlay, "Ingress")["gpux-gateway"]["spec"]
    (rule,) = ingress["rules"]
    paths = {p["path"] for p in rule["http"]["paths"]}
    assert paths == {"/v1", "/openapi.json", "/docs"}  # never /metrics, /healthz, /readyz
    for path in rule["http"]["paths"]:
        assert path["backend"]["service"] == {"name": "gpux-gateway", "port": {"name": "http"}}
    if overlay == "prod":
        assert ingress["tls"][0]["hosts"] == [rule["host"]]


def test_prod_defines_no_secret_values() -> None:
    for obj in rendered("prod"):
        assert obj["kind"] != "Secret" or not (obj.get("data") or obj.get("stringData")), obj


def _secret_refs(overlay: str) -> set[tuple[str, str]]:
    refs = set()
    for deployment in of_kind(overlay, "Deployment").values():
        for entry in app_container(deployment)["env"]:
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref and not ref.get("optional"):
                refs.add((ref["name"], ref["key"]))
    for role in of_kind(overlay, "Cluster")["gpux-pg"]["spec"]["managed"]["roles"]:
        refs.add((role["passwordSecret"]["name"], "password"))
    return refs


def test_dev_example_secrets_cover_every_reference_and_are_marked() -> None:
    secrets = of_kind("dev", "Secret")
    for name, key in _secret_refs("dev"):
        assert key in secrets[name].get("stringData", {}), (name, key)
    for name, secret in secrets.items():
        assert secret["metadata"]["annotations"]["gpux/placeholder"] == "dev only", name
        for value in secret["stringData"].values():
            assert value in SERVICES or "dev-only" in value, (
                name,
                value,
            )  # usernames or placeholders


def test_deploy_doc_names_every_secret_prod_needs() -> None:
    doc = (ROOT / "docs" / "DEPLOY.md").read_text()
    for name, _key in _secret_refs("prod"):
        assert name in doc, name


def test_dockerfile_runs_as_the_manifests_user() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG SERVICE=gateway$", dockerfile, re.M)
    assert re.search(r'uv sync --frozen --no-dev .*--package "?gpux-\$\{SERVICE\}"?', dockerfile)
    assert re.search(r'^CMD .*python -m \\?"?gpux_\$\{SERVICE\}', dockerfile, re.M)
    (user,) = re.findall(r"^USER (\d+):(\d+)$", dockerfile, re.M)
    for deployment in of_kind("prod", "Deployment").values():
        context = deployment["spec"]["template"]["spec"]["securityContext"]
        assert (str(context["runAsUser"]), str(context["runAsGroup"])) == user
