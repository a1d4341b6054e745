"""docs/asyncapi.yaml is the registry's event catalogue, with the real payload schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpux_contracts.asyncapi import message_id
from gpux_contracts.topics import REGISTRY
from gpux_platform.asyncapi import render

COMMITTED = Path(__file__).resolve().parents[4] / "docs" / "asyncapi.yaml"


def test_the_committed_document_is_the_generated_one() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(), (
        "docs/asyncapi.yaml drifted from the registry: run `make asyncapi` and commit it"
    )


def test_every_topic_is_a_channel_with_its_messages_and_their_payload_schemas() -> None:
    doc: dict[str, Any] = yaml.safe_load(render())
    assert doc["asyncapi"].startswith("3.")
    assert list(doc["channels"]) == [t.name for t in REGISTRY]
    schemas = doc["components"]["schemas"]
    for topic in REGISTRY:
        channel = doc["channels"][topic.name]
        assert channel["bindings"]["kafka"]["partitions"] == topic.partitions
        assert set(channel["messages"]) == {message_id(p) for p in topic.payloads}
        for payload in topic.payloads:
            message = doc["components"]["messages"][message_id(payload)]
            envelope = schemas[message["payload"]["$ref"].rsplit("/", 1)[1]]
            inner = schemas[envelope["properties"]["payload"]["$ref"].rsplit("/", 1)[1]]
            assert set(inner["properties"]) == set(payload.model_fields)
            assert inner["properties"], f"{payload.__name__} has no schema"
