"""deploy/local/compose.yaml: the whole exchange for a machine with Docker, checked by shape.

No Docker engine runs here, so the file is read as YAML (anchors and merge keys resolved, as
Compose does) and held to what the exchange needs: every service built from the
repository's Dockerfile for its own service, on its own port, with the endpoints of the
compose network, settings its settings class accepts, a healthcheck, and a start only once
Kafka, PostgreSQL and Redis are healthy; the infrastructure on the loopback ports of
``gpux infra up``.
"""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from gpux_devinfra import kafka, postgres, redis
from gpux_devinfra.testing.environment import settings_from
from gpux_platform.service import ServiceSpec

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "local" / "compose.yaml"

# Compose service -> (gpux service, the role's settings, its port).
EXCHANGE: dict[str, tuple[str, dict[str, str], int]] = {
    "catalog": ("catalog", {}, 8101),
    "pricing": ("pricing", {}, 8102),
    "matching": ("matching", {}, 8103),
    "billing": ("billing", {}, 8104),
    "gateway-views": ("gateway", {"GPUX_GATEWAY_ROLE": "views"}, 8105),
    "gateway": ("gateway", {"GPUX_GATEWAY_ROLE": "api"}, 8000),
}
STORES = ("kafka", "postgres", "redis")

Obj = dict[str, Any]


@functools.cache
def compose() -> Obj:
    loaded: Obj = yaml.safe_load(COMPOSE.read_text())
    return loaded


def service(name: str) -> Obj:
    found: Obj = compose()["services"][name]
    return found


def spec(name: str) -> ServiceSpec:
    found = importlib.import_module(f"gpux_{name}.bootstrap").SPEC
    assert isinstance(found, ServiceSpec)
    return found


def test_compose_runs_the_whole_exchange() -> None:
    assert compose()["name"] == "gpux"
    services = set(compose()["services"])
    assert services == set(STORES) | set(EXCHANGE)
    workspace = {p.name for p in (ROOT / "services").iterdir() if (p / "pyproject.toml").exists()}
    assert {gpux for gpux, _, _ in EXCHANGE.values()} == workspace


def test_every_container_has_a_healthcheck() -> None:
    for name, body in compose()["services"].items():
        check = body["healthcheck"]
        assert check["test"][0] == "CMD", name
        assert check["retries"] >= 3, name
        assert re.fullmatch(r"\d+s", check["interval"]), name


@pytest.mark.parametrize("name", sorted(EXCHANGE))
def test_each_service_is_built_from_the_dockerfile_for_itself(name: str) -> None:
    body = service(name)
    gpux, _, _ = EXCHANGE[name]
    build = body["build"]
    context = (COMPOSE.parent / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).is_file()
    assert build["args"] == {"SERVICE": gpux}
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG SERVICE=", dockerfile, re.M)
    assert "COPY --from=web /web/dist /app/web/dist" in dockerfile  # the gateway serves it
    assert body["read_only"] is True
    assert body["cap_drop"] == ["ALL"]


@pytest.mark.parametrize("name", sorted(EXCHANGE))
def test_each_service_waits_for_healthy_stores(name: str) -> None:
    depends = service(name)["depends_on"]
    for store in STORES:
        assert depends[store] == {"condition": "service_healthy"}, (name, store)
    for other in depends:
        assert other in compose()["services"], other
    # The readiness probe asks the service's own port, in Python the image has.
    probe = service(name)["healthcheck"]["test"]
    assert probe[:3] == ["CMD", "python", "-c"], name
    compile(probe[3], f"{name}-healthcheck", "exec")
    assert "os.environ['GPUX_HTTP_PORT']" in probe[3]
    assert "/readyz" in probe[3]
    assert "$" not in probe[3]  # Compose would interpolate it


@pytest.mark.parametrize("name", sorted(EXCHANGE))
def test_each_service_settings_parse_and_name_the_compose_network(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpux, role, port = EXCHANGE[name]
    environment = {k: str(v) for k, v in service(name)["environment"].items()}
    assert environment["GPUX_HTTP_PORT"] == str(port)
    assert service(name)["ports"] == [f"127.0.0.1:{port}:{port}"]
    settings_type = spec(gpux).settings_type
    for variable in environment:
        assert variable.startswith("GPUX_"), variable
        assert variable[5:].lower() in settings_type.model_fields, (name, variable)
    settings = settings_from(settings_type, environment, monkeypatch)
    assert settings.http_port == port
    for variable, value in role.items():
        assert str(getattr(settings, variable[5:].lower())) == value
    # The endpoints are the stores' compose names and ports.
    kafka_env = service("kafka")["environment"]
    advertised = dict(
        entry.split("://", 1) for entry in kafka_env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    )
    assert environment["GPUX_KAFKA_BOOTSTRAP"] == advertised["INTERNAL"]
    database = urlsplit(environment["GPUX_DATABASE_URL"])
    pg = service("postgres")["environment"]
    assert (database.hostname, database.port) == ("postgres", 5432)
    assert (database.username, database.password) == (pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"])
    assert database.path == "/" + pg["POSTGRES_DB"]
    assert urlsplit(environment["GPUX_REDIS_URL"]).hostname == "redis"


def test_the_stores_are_on_the_loopback_ports_of_gpux_infra() -> None:
    published = {name: service(name)["ports"] for name in STORES}
    assert published["kafka"] == [f"127.0.0.1:{kafka.PORT}:{kafka.PORT}"]
    assert published["postgres"] == [f"127.0.0.1:{postgres.PORT}:5432"]
    assert published["redis"] == [f"127.0.0.1:{redis.PORT}:6379"]
    kafka_env = service("kafka")["environment"]
    advertised = kafka_env["KAFKA_ADVERTISED_LISTENERS"]
    assert f"EXTERNAL://127.0.0.1:{kafka.PORT}" in advertised
    listeners = kafka_env["KAFKA_LISTENERS"]
    for name in kafka_env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","):
        assert name.split(":")[0] + "://" in listeners
