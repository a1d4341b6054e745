"""deploy/k8s: every overlay renders, validates against the real schemas, and says what the
system needs.

Both overlays are rendered with the real kustomize and validated with ``kubeconform
-strict`` against the Kubernetes core schemas and the operators' real CRD schemas (Strimzi
1.x, CloudNativePG, the Prometheus Operator's PodMonitor): ``render.py`` and
``scripts/k8s_tools.py`` fetch all of it from the package registries on first use. An
unknown field fails, and a test proves it does. The KafkaTopics must be the topic registry
of libs/contracts, and the services' settings must parse with their real settings classes. A
service may run in a second Deployment in one of its roles (the gateway's views: its image
and database, a port of its own, no Service). Matching's autoscaler stops where its consumers
would idle: that test wires the service to read what it subscribes to, so it needs the
infrastructure (marked integration; everything else here is unit, see conftest.py).
"""

from __future__ import annotations

import base64
import copy
import functools
import importlib
import importlib.util
import ipaddress
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpux_contracts.topics import REGISTRY, by_name
from gpux_devinfra.testing.environment import settings_from
from gpux_devinfra.testing.modules import load_path
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

# Settings the manifests set that the services do not read yet: the lead wires them (the
# test below fails once one becomes a real setting, so this list is kept short).
PENDING_SETTINGS: set[str] = set()


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


Obj = dict[str, Any]


# Tests run with --import-mode=importlib and tests/ is no package: load the helper by path.
render = load_path("gpux_k8s_render", HERE / "render.py")


@functools.cache
def rendered(overlay: str) -> tuple[Obj, ...]:
    return tuple(render.build(overlay))


def of_kind(overlay: str, kind: str) -> dict[str, Obj]:
    """The overlay's objects of a kind, by name (generated ones without their hash suffix)."""
    return {
        render.base_name(o["metadata"]["name"]): o for o in rendered(overlay) if o["kind"] == kind
    }


def app_container(deployment: Obj) -> Obj:
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["containers"]
    (container,) = containers
    return container


def init_container(deployment: Obj) -> Obj:
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["initContainers"]
    (container,) = containers
    assert container["name"] == "migrate"
    return container


def secret_values(secret: Obj) -> dict[str, str]:
    """A rendered Secret's values (kustomize writes them base64-encoded under data)."""
    return {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}


@pytest.fixture(scope="session", autouse=True)
def k8s_tools() -> Any:
    """kustomize, kubeconform and the schemas, fetched before any test renders (a fresh
    machine fetches them here: Go module proxy, Maven Central, PyPI; cached afterwards)."""
    return render.tools()


# --- rendering and schemas ----------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_the_whole_system(overlay: str) -> None:
    kinds = {(o["kind"], render.base_name(o["metadata"]["name"])) for o in rendered(overlay)}
    for name in SERVICES:
        assert ("Deployment", f"gpux-{name}") in kinds
        assert ("Service", f"gpux-{name}") in kinds
    for name in ROLES:  # nothing sends a role's pods requests: no Service
        assert ("Deployment", f"gpux-{name}") in kinds
        assert ("Service", f"gpux-{name}") not in kinds
    for name in WORKLOADS:
        assert ("PodMonitor", f"gpux-{name}") in kinds
    for expected in [
        ("Ingress", "gpux-gateway"),
        ("ConfigMap", "gpux-config"),
        ("ConfigMap", "gpux-gateway-config"),
        ("ConfigMap", "gpux-grafana-dashboard"),
        ("Kafka", "gpux"),
        ("KafkaNodePool", "dual-role"),
        ("Cluster", "gpux-pg"),
        ("StatefulSet", "gpux-redis"),
        ("Service", "gpux-redis"),
        ("NetworkPolicy", "default-deny"),
    ]:
        assert expected in kinds
    namespaces = {
        o["metadata"].get("namespace") for o in rendered(overlay) if o["kind"] != "Namespace"
    }
    assert namespaces == {"gpux-dev" if overlay == "dev" else "gpux"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kubeconform_strict_passes_with_the_real_schemas(overlay: str) -> None:
    """Every object, the custom resources included, validates strictly: no schema is missing
    (kubeconform counts that as an error), no field is unknown."""
    code, results = render.kubeconform(render.build_text(overlay))
    assert [r for r in results if r["status"] != "statusValid"] == []
    assert code == 0
    checked = {(r["version"], r["kind"]) for r in results}
    assert {(o["apiVersion"], o["kind"]) for o in rendered(overlay)} == checked
    assert len(results) == len(rendered(overlay))
    for crd in [("kafka.strimzi.io/v1", "Kafka"), ("kafka.strimzi.io/v1", "KafkaTopic")]:
        assert crd in checked
    assert ("postgresql.cnpg.io/v1", "Cluster") in checked
    assert ("monitoring.coreos.com/v1", "PodMonitor") in checked


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kubectl_renders_what_kustomize_renders(overlay: str) -> None:
    """DEPLOY.md applies with ``kubectl apply -k``: kubectl's own kustomize must render the
    same objects as the pinned one."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: DEPLOY.md's `kubectl apply -k` is not checked")
    directory = render.overlay_dir(overlay)
    done = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    theirs = {render.object_id(o): o for o in yaml.safe_load_all(done.stdout) if o}
    ours = {render.object_id(o): o for o in rendered(overlay)}
    assert sorted(theirs) == sorted(ours)
    for key, obj in ours.items():
        assert theirs[key] == obj, key


def _invalid(overlay: str) -> dict[str, Obj]:
    """Objects of the overlay, each broken in one way the real schemas refuse."""
    objects = {o["kind"]: copy.deepcopy(o) for o in rendered(overlay)}
    topic, kafka, cluster = objects["KafkaTopic"], objects["Kafka"], objects["Cluster"]
    deployment, monitor = objects["Deployment"], objects["PodMonitor"]
    topic["spec"]["partitons"] = 6  # a typo
    kafka["spec"]["kafka"]["listeners"][0]["type"] = "public"  # not in the enum
    cluster["spec"]["backup"] = {"retentionPolicy": "thirty days"}  # not its pattern
    app_container(deployment)["imagePullPolicyy"] = "Always"  # a core object's typo
    monitor["spec"]["podMetricsEndpoints"][0]["portt"] = "http"
    old = copy.deepcopy(topic)
    old["apiVersion"] = "kafka.strimzi.io/v1beta2"  # Strimzi 1.x serves only v1
    return {
        "typo": topic,
        "enum": kafka,
        "pattern": cluster,
        "core": deployment,
        "podmonitor": monitor,
        "v1beta2": old,
    }


def test_kubeconform_refuses_an_invalid_field() -> None:
    """The negative: each broken object fails kubeconform -strict on its own."""
    for what, obj in _invalid("prod").items():
        code, results = render.kubeconform(yaml.safe_dump(obj))
        assert code != 0, what
        ((result,),) = [results]
        assert result["status"] in {"statusInvalid", "statusError"}, (what, result)
        assert result["name"] == obj["metadata"]["name"], what


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


def test_postgres_roles_are_the_services_and_only_migrators_have_ddl() -> None:
    """Per service a runtime role (DML on its schema's tables, no CREATE anywhere) and a
    migration role that owns the schema; PUBLIC gets nothing on the database."""
    cluster = of_kind("prod", "Cluster")["gpux-pg"]["spec"]
    roles = {r["name"]: r for r in cluster["managed"]["roles"]}
    assert set(roles) == set(SERVICES) | {f"{name}_migrator" for name in SERVICES}
    for name, role in roles.items():
        assert role["login"] is True
        secret = f"gpux-pg-role-{name.replace('_migrator', '-migrator')}"
        assert role["passwordSecret"]["name"] == secret
    statements = cluster["bootstrap"]["initdb"]["postInitApplicationSQL"]
    assert "REVOKE ALL ON DATABASE gpux FROM PUBLIC" in statements
    assert "REVOKE CREATE ON SCHEMA public FROM PUBLIC" in statements
    for name in SERVICES:
        migrator = f"{name}_migrator"
        assert f"CREATE ROLE {name} NOLOGIN" in statements
        assert f"CREATE SCHEMA {name} AUTHORIZATION {migrator}" in statements
        assert f"GRANT CONNECT, CREATE ON DATABASE gpux TO {migrator}" in statements
        assert f"GRANT USAGE ON SCHEMA {name} TO {name}" in statements
        dml = f"IN SCHEMA {name} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {name}"
        assert f"ALTER DEFAULT PRIVILEGES FOR ROLE {migrator} {dml}" in statements
        granted = [s for s in statements if re.search(rf"\bTO {name}$", s)]
        assert granted, name
        for statement in granted:  # the runtime role: never CREATE, never ALL, never owner
            assert not re.search(r"\b(CREATE|ALL|TRUNCATE|REFERENCES|TRIGGER)\b.* ON ", statement)
        assert not any(f"AUTHORIZATION {name}" == s.split(" ", 3)[-1] for s in statements)


def test_postgres_backs_up_to_object_storage_in_prod() -> None:
    """Continuous WAL archiving and a daily base backup to the configured bucket; the
    credentials are the overlay's Secret; dev has neither (no object store)."""
    backup = of_kind("prod", "Cluster")["gpux-pg"]["spec"]["backup"]
    store = backup["barmanObjectStore"]
    assert store["destinationPath"].startswith("s3://")
    assert store["destinationPath"] != "s3://gpux-backups/gpux-pg"  # the overlay's bucket
    for key in ("accessKeyId", "secretAccessKey"):
        assert store["s3Credentials"][key]["name"] == "gpux-backup-s3"
    assert re.fullmatch(r"[1-9][0-9]*[dwm]", backup["retentionPolicy"])
    (scheduled,) = of_kind("prod", "ScheduledBackup").values()
    assert scheduled["spec"]["cluster"] == {"name": "gpux-pg"}
    assert scheduled["spec"]["method"] == "barmanObjectStore"
    assert len(scheduled["spec"]["schedule"].split()) == 6  # CloudNativePG's: seconds first
    assert "gpux-backup-s3" in of_kind("prod", "Secret")
    assert "backup" not in of_kind("dev", "Cluster")["gpux-pg"]["spec"]
    assert not of_kind("dev", "ScheduledBackup")


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
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            own = container["securityContext"]
            assert own["allowPrivilegeEscalation"] is False, name
            assert own["readOnlyRootFilesystem"] is True, name
            assert own["capabilities"]["drop"] == ["ALL"], name
            assert own.get("privileged", False) is False, name
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][kind]), (name, kind)
            if container not in pod.get("initContainers", []):
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
        assert (render.base_name(database["name"]), database["key"]) == (f"gpux-{name}-db", "url")
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
        assert (render.base_name(ref["name"]), ref["key"]) == ("gpux-gateway-secrets", key)


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
        assert init_container(deployment) == init_container(own)  # the gateway's migrations
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert labels["labels"]["app.kubernetes.io/name"] == selector["app.kubernetes.io/name"]
        # The service's own Service must not send the role's pods its requests.
        service_selector = of_kind(overlay, "Service")[f"gpux-{service}"]["spec"]["selector"]
        assert not service_selector.items() <= labels["labels"].items(), name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_migrations_run_before_the_service_as_its_migration_role(overlay: str) -> None:
    """The init container "migrate" runs the service's image, applies SPEC.migrations with
    gpux_platform.migrations as the schema's migration role, and nothing else gets that URL;
    what its script imports exists (it runs only in a cluster, so the names are checked)."""
    for name, service in WORKLOADS.items():
        deployment = of_kind(overlay, "Deployment")[f"gpux-{name}"]
        init = init_container(deployment)
        assert init["image"] == app_container(deployment)["image"], name
        assert init["command"][:2] == ["python", "-c"], name
        script = init["command"][2]
        compile(script, f"{name}-migrate", "exec")
        assert f"from gpux_{service}.bootstrap import SPEC" in script, name
        assert "migrations.apply(pool, schema_of(SPEC.name), SPEC.migrations)" in script
        (env,) = init["env"]
        assert env["name"] == "GPUX_DATABASE_URL"
        assert env["valueFrom"]["secretKeyRef"]["name"].startswith(f"gpux-{service}-migrate-db")
        app_env = {e["name"]: e for e in app_container(deployment)["env"]}
        app_secret = app_env["GPUX_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"]
        assert "migrate" not in app_secret, name
    migrations = importlib.import_module("gpux_platform.migrations")
    service_module = importlib.import_module("gpux_platform.service")
    assert callable(migrations.apply)
    assert callable(service_module.schema_of)
    for service in SERVICES:
        directory = spec(service).migrations
        assert directory is None or directory.is_dir(), service


def test_the_services_skip_their_start_up_migrations_on_kubernetes() -> None:
    """The init container migrates as the migration role; the service itself, whose runtime
    role has no DDL, is told not to (``GPUX_MIGRATE_ON_START``, a setting of every service)."""
    config = of_kind("prod", "ConfigMap")["gpux-config"]["data"]
    assert config["GPUX_MIGRATE_ON_START"] == "false"
    for service in SERVICES:
        assert "migrate_on_start" in spec(service).settings_type.model_fields, service


def test_the_views_have_the_gateways_resources_where_the_gateway_has_the_defaults() -> None:
    """dev gives every Deployment the same small resources; prod gives the gateway more for
    its SSE connections and the views a consumer's (``patches/apps-resources.yaml``)."""
    dev = of_kind("dev", "Deployment")
    prod = of_kind("prod", "Deployment")
    views = app_container(dev["gpux-gateway-views"])["resources"]
    assert views == app_container(dev["gpux-gateway"])["resources"]
    views = app_container(prod["gpux-gateway-views"])["resources"]
    assert views == app_container(prod["gpux-billing"])["resources"]


def _value(overlay: str, entry: Obj) -> str:
    """An env entry's value: literal, or read from the rendered ConfigMap or Secret."""
    if "value" in entry:
        value: str = entry["value"]
        return value
    source = entry["valueFrom"]
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"]
        objects = {
            o["metadata"]["name"]: o["data"] for o in rendered(overlay) if o["kind"] == "ConfigMap"
        }
        return str(objects[ref["name"]][ref["key"]])
    ref = source["secretKeyRef"]
    secrets = {o["metadata"]["name"]: o for o in rendered(overlay) if o["kind"] == "Secret"}
    return secret_values(secrets[ref["name"]])[ref["key"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_settings_parse_with_the_services_own_classes(
    overlay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every GPUX_* variable is a real setting and its value parses (prod rules in prod)."""
    configmaps = of_kind(overlay, "ConfigMap")
    config = configmaps["gpux-config"]["data"]
    assert config["GPUX_ENV"] == ("dev" if overlay == "dev" else "prod")
    assert config["GPUX_HTTP_HOST"] == "0.0.0.0"
    assert config["GPUX_LOG_JSON"] == "true"
    assert config["GPUX_KAFKA_BOOTSTRAP"] == "gpux-kafka-bootstrap:9092"
    for name, service in WORKLOADS.items():
        container = app_container(of_kind(overlay, "Deployment")[f"gpux-{name}"])
        name_of_config = configmaps["gpux-config"]["metadata"]["name"]
        assert container["envFrom"] == [{"configMapRef": {"name": name_of_config}}]
        environment = dict(config)
        for entry in container["env"]:
            environment[entry["name"]] = _value(overlay, entry)
        settings_type = spec(service).settings_type
        for variable in set(environment) - PENDING_SETTINGS:
            if variable.startswith("GPUX_"):
                assert variable[5:].lower() in settings_type.model_fields, (name, variable)
        settings = settings_from(settings_type, environment, monkeypatch)
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


def test_prod_commits_no_secret_values() -> None:
    """prod's Secrets are generated from files the secret store writes before the apply:
    none is committed (secrets/ holds only its .gitignore) and no Secret is a resource."""
    overlay = K8S / "overlays" / "prod"
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    generators = kustomization["secretGenerator"]
    assert generators
    for entry in generators:
        assert set(entry) <= {"name", "type", "envs", "options"}, entry  # no literals
        assert all(path.startswith("secrets/") for path in entry["envs"]), entry
    tracked = subprocess.run(
        ["git", "ls-files", str(overlay / "secrets")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [Path(path).name for path in tracked] == [".gitignore"]
    assert set(render.missing_env_files(overlay).values()) == {e["name"] for e in generators}
    for path in overlay.rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            assert not doc or doc.get("kind") != "Secret", path


def _secret_refs(overlay: str) -> set[tuple[str, str]]:
    refs = set()
    for deployment in of_kind(overlay, "Deployment").values():
        for entry in [*app_container(deployment)["env"], *init_container(deployment)["env"]]:
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref and not ref.get("optional"):
                refs.add((ref["name"], ref["key"]))
    cluster = of_kind(overlay, "Cluster")["gpux-pg"]["spec"]
    for role in cluster["managed"]["roles"]:
        refs.add((role["passwordSecret"]["name"], "password"))
    credentials = cluster.get("backup", {}).get("barmanObjectStore", {}).get("s3Credentials", {})
    for ref in credentials.values():
        refs.add((ref["name"], ref["key"]))
    return refs


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_secret_reference_resolves(overlay: str) -> None:
    secrets = {o["metadata"]["name"]: o for o in rendered(overlay) if o["kind"] == "Secret"}
    for name, key in _secret_refs(overlay):
        assert key in secret_values(secrets[name]), (name, key)
    for name, secret in secrets.items():
        if name.startswith("gpux-pg-role-"):  # CloudNativePG reads them by their fixed name
            assert secret["type"] == "kubernetes.io/basic-auth", name
            assert secret["metadata"]["labels"]["cnpg.io/reload"] == "true", name
            role = secret_values(secret)["username"]
            assert name == "gpux-pg-role-" + role.replace("_migrator", "-migrator")


def test_dev_secrets_are_marked_placeholders() -> None:
    for name, secret in of_kind("dev", "Secret").items():
        assert secret["metadata"]["annotations"]["gpux/placeholder"] == "dev only", name
        for value in secret_values(secret).values():
            role = value.removesuffix("_migrator")
            assert role in SERVICES or "dev-only" in value, (name, value)


def test_deploy_doc_names_every_secret_prod_needs() -> None:
    doc = (ROOT / "docs" / "DEPLOY.md").read_text()
    for name, _key in _secret_refs("prod"):
        assert render.base_name(name) in doc, name


def test_dockerfile_runs_as_the_manifests_user() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG SERVICE=gateway$", dockerfile, re.M)
    assert re.search(r'uv sync --frozen --no-dev .*--package "?gpux-\$\{SERVICE\}"?', dockerfile)
    assert re.search(r'^CMD .*python -m \\?"?gpux_\$\{SERVICE\}', dockerfile, re.M)
    (user,) = re.findall(r"^USER (\d+):(\d+)$", dockerfile, re.M)
    for deployment in of_kind("prod", "Deployment").values():
        context = deployment["spec"]["template"]["spec"]["securityContext"]
        assert (str(context["runAsUser"]), str(context["runAsGroup"])) == user


# --- configuration that rolls, network policies, telemetry --------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_generated_config_and_secrets_roll_the_pods(overlay: str) -> None:
    """The ConfigMaps and the Secrets the pods read carry a hash of their contents, and the
    Deployments name them by it: an edit renames them, which rolls the pods."""
    generated = {
        o["metadata"]["name"]
        for o in rendered(overlay)
        if o["kind"] in {"ConfigMap", "Secret"}
        and render.base_name(o["metadata"]["name"]) != o["metadata"]["name"]
    }
    assert {render.base_name(n) for n in generated} >= {"gpux-config", "gpux-gateway-config"}
    for name in WORKLOADS:
        deployment = of_kind(overlay, "Deployment")[f"gpux-{name}"]
        text = yaml.safe_dump(deployment["spec"]["template"])
        refs = set(re.findall(r"name: (gpux-[a-z-]+-[bcdfghkmt2456789]{10})\b", text))
        assert refs, name
        assert refs <= generated, (name, refs - generated)
        assert any(render.base_name(r) == "gpux-config" for r in refs), name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_forwarded_headers_are_trusted_from_the_ingress_controller_only(overlay: str) -> None:
    env = {
        e["name"]: e for e in app_container(of_kind(overlay, "Deployment")["gpux-gateway"])["env"]
    }
    value = _value(overlay, env["FORWARDED_ALLOW_IPS"])
    assert "*" not in value
    networks = [ipaddress.ip_network(part.strip()) for part in value.split(",")]
    assert networks
    assert all(not n.is_global for n in networks), networks  # a cluster range, not the world
    base = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())
    (gateway,) = [g for g in base["configMapGenerator"] if g["name"] == "gpux-gateway-config"]
    assert gateway["literals"] == ["FORWARDED_ALLOW_IPS=127.0.0.1"]  # the base trusts no one


def _policies(overlay: str) -> list[Obj]:
    return list(of_kind(overlay, "NetworkPolicy").values())


def _selects(policy: Obj, labels: dict[str, str]) -> bool:
    """Whether the policy's podSelector selects a pod with these labels."""
    selector = policy["spec"]["podSelector"]
    match_labels: dict[str, str] = selector.get("matchLabels", {})
    if not match_labels.items() <= labels.items():
        return False
    expressions: list[Obj] = selector.get("matchExpressions", [])
    for expression in expressions:
        assert expression["operator"] == "In", expression  # the only one we use
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def _allowed(overlay: str, labels: dict[str, str], direction: str) -> list[Obj]:
    """The rules (egress or ingress) of every policy that selects pods with these labels."""
    rules: list[Obj] = []
    for policy in _policies(overlay):
        if _selects(policy, labels) and direction.capitalize() in policy["spec"]["policyTypes"]:
            rules.extend(policy["spec"].get(direction, []))
    return rules


def _pod_labels(overlay: str, name: str) -> dict[str, str]:
    deployment = of_kind(overlay, "Deployment")[f"gpux-{name}"]
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies_deny_by_default(overlay: str) -> None:
    deny = of_kind(overlay, "NetworkPolicy")["default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    for policy in _policies(overlay):
        for rule in [*policy["spec"].get("ingress", []), *policy["spec"].get("egress", [])]:
            assert rule, policy["metadata"]["name"]  # an empty rule would allow everything
            if policy["metadata"]["name"] != "allow-dns":
                assert rule.get("ports"), policy["metadata"]["name"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_reaches_its_stores_and_nothing_else(overlay: str) -> None:
    """Egress: Kafka 9092, PostgreSQL 5432, Redis 6379, DNS, the trace collector; HTTPS out
    only for pricing (ECB rates) and the gateway (webhooks). Ingress: /metrics from the
    monitoring namespace; the gateway's 8000 from the ingress controller only."""
    for name in WORKLOADS:
        labels = _pod_labels(overlay, name)
        egress = _allowed(overlay, labels, "egress")
        ports = {p["port"] for rule in egress for p in rule["ports"]}
        https = {"pricing", "gateway"}
        assert ports == {9092, 5432, 6379, 53, 4318} | ({443} if name in https else set()), name
        ingress = _allowed(overlay, labels, "ingress")
        sources = {
            (p["port"], peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"])
            for rule in ingress
            for p in rule["ports"]
            for peer in rule["from"]
        }
        expected = {("http", "monitoring")} | (
            {(8000, "ingress-nginx")} if name == "gateway" else set()
        )
        assert sources == expected, name
    postgres = _allowed(overlay, {"cnpg.io/cluster": "gpux-pg"}, "ingress")
    assert {
        "from": [{"podSelector": {"matchLabels": {"gpux.io/tier": "service"}}}],
        "ports": [{"port": 5432, "protocol": "TCP"}],
    } in postgres
    kafka = of_kind(overlay, "Kafka")["gpux"]["spec"]["kafka"]["listeners"]
    (peer,) = kafka[0]["networkPolicyPeers"]
    assert peer["podSelector"]["matchLabels"].items() <= _pod_labels(overlay, "catalog").items()
    redis = of_kind(overlay, "NetworkPolicy")["gpux-redis"]["spec"]["ingress"]
    assert redis == [
        {
            "from": [{"podSelector": {"matchLabels": {"gpux.io/tier": "service"}}}],
            "ports": [{"port": 6379, "protocol": "TCP"}],
        }
    ]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_workload_has_a_pod_monitor_on_its_http_port(overlay: str) -> None:
    monitors = of_kind(overlay, "PodMonitor")
    assert set(monitors) == {f"gpux-{n}" for n in WORKLOADS}
    for name, monitor in monitors.items():
        deployment = of_kind(overlay, "Deployment")[name]
        assert monitor["spec"]["selector"] == deployment["spec"]["selector"]
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
        assert app_container(deployment)["ports"][0]["name"] == "http"


def test_the_grafana_dashboard_shows_what_to_watch() -> None:
    """Request rate and latency, consumer lag, outbox backlog, events published, each from a
    metric family the platform defines."""
    dashboard = of_kind("prod", "ConfigMap")["gpux-grafana-dashboard"]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    board = yaml.safe_load(dashboard["data"]["gpux.json"])  # JSON is YAML
    exprs = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in board["panels"]}
    wanted = {
        "Request rate": "rate(gpux_http_request_seconds_count",
        "Request latency": "histogram_quantile(0.95, sum by (le, job) "
        "(rate(gpux_http_request_seconds_bucket",
        "Consumer lag": "sum by (group, topic) (gpux_consumer_lag",
        "Outbox backlog": "gpux_outbox_backlog",
        "Events published": "rate(gpux_events_published_total",
    }
    for title, expr in wanted.items():
        assert expr in exprs[title], title
    metrics = importlib.import_module("gpux_platform.metrics")
    exported = {m._name for m in vars(metrics).values() if hasattr(m, "_name")}
    families = {
        "gpux_http_request_seconds",
        "gpux_consumer_lag",
        "gpux_events_published",
        "gpux_outbox_backlog",
        "gpux_outbox_oldest_age_seconds",
    }
    assert families <= exported, families - exported
    every = " ".join(exprs.values())
    for family in families:
        assert family in every, family
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))


def test_the_restore_runbooks_cluster_validates() -> None:
    """DEPLOY.md's restore (a new Cluster bootstrapped from the backups, with a recovery
    target) is a Cluster the real CRD schema accepts, reading the backups' credentials."""
    doc = (ROOT / "docs" / "DEPLOY.md").read_text()
    match = re.search(r"replaced by\n\n((?: {7}.*\n)+)\n", doc)
    assert match, "the restore runbook's bootstrap block"
    text = "\n".join(line[7:] for line in match.group(1).splitlines())
    text = re.sub(r"# (recoveryTarget:|  targetTime:)", r"\1", text)  # its optional target
    text = text.replace("<your bucket>", "gpux-prod-backups")
    snippet = yaml.safe_load(text)
    assert snippet["bootstrap"]["recovery"]["recoveryTarget"]["targetTime"]
    cluster = copy.deepcopy(of_kind("prod", "Cluster")["gpux-pg"])
    cluster["metadata"]["name"] = "gpux-pg-restore"
    cluster["spec"] = {**cluster["spec"], **snippet}
    source = snippet["externalClusters"][0]
    assert source["name"] == snippet["bootstrap"]["recovery"]["source"] == "gpux-pg"
    backups = of_kind("prod", "Cluster")["gpux-pg"]["spec"]["backup"]["barmanObjectStore"]
    assert source["barmanObjectStore"]["s3Credentials"] == backups["s3Credentials"]
    code, results = render.kubeconform(yaml.safe_dump(cluster))
    assert [r["status"] for r in results] == ["statusValid"], results
    assert code == 0


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_traces_are_configured_by_the_standard_variables(overlay: str) -> None:
    """OTEL_* (the SDK's and the exporter's own variables), never the deprecated GPUX_OTEL_*;
    prod exports OTLP to the collector, dev exports nothing; OTEL_SERVICE_NAME is never shared
    (each service names itself gpux-<name>)."""
    config = of_kind(overlay, "ConfigMap")["gpux-config"]["data"]
    assert not [k for k in config if k.startswith("GPUX_OTEL_")]
    assert "OTEL_SERVICE_NAME" not in config
    telemetry = importlib.import_module("gpux_platform.telemetry")
    assert config["OTEL_TRACES_EXPORTER"] in telemetry.EXPORTERS
    expected = "none" if overlay == "dev" else "otlp"
    assert config["OTEL_TRACES_EXPORTER"] == expected
    endpoint = config["OTEL_EXPORTER_OTLP_ENDPOINT"]
    assert endpoint == "http://otel-collector.observability.svc:4318"  # no /v1/traces: appended
    attributes = dict(a.split("=", 1) for a in config["OTEL_RESOURCE_ATTRIBUTES"].split(","))
    assert attributes["deployment.environment.name"] == overlay
