import pytest
from pydantic import ValidationError

from gpux_contracts.topics import CATALOG_GPUS, REGISTRY, Cleanup, by_name
from gpux_platform.settings import Environment, GpuxSettings


def test_registry_names_are_unique_and_state_topics_are_compacted() -> None:
    names = [t.name for t in REGISTRY]
    assert len(names) == len(set(names))
    assert by_name("catalog.gpus").cleanup is Cleanup.COMPACT
    assert CATALOG_GPUS.configs() == {"cleanup.policy": "compact"}
    for topic in REGISTRY:
        assert topic.partitions >= 1
        assert topic.name.count(".") >= 1


def test_namespace_prefixes_topics_groups_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUX_NAMESPACE", "t1.")
    settings = GpuxSettings()
    assert settings.topic(CATALOG_GPUS) == "t1.catalog.gpus"
    assert settings.group("pricing") == "t1.pricing"
    assert settings.redis_key("idem", "abc") == "t1.idem:abc"


def test_prod_refuses_the_dev_database_url() -> None:
    with pytest.raises(ValidationError, match="GPUX_DATABASE_URL"):
        GpuxSettings(env=Environment.PROD)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUX_KAFKA_BOOTSTRAP", "k:1")
    monkeypatch.setenv("GPUX_HTTP_PORT", "not-a-port")
    with pytest.raises(ValidationError):
        GpuxSettings()
    monkeypatch.setenv("GPUX_HTTP_PORT", "9000")
    assert GpuxSettings().kafka_bootstrap == "k:1"
    assert GpuxSettings().http_port == 9000
