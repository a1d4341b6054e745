"""The event catalogue: an AsyncAPI 3 document generated from the topic registry.

One channel per registry topic (its name is the address; a deployment prefixes it with its
namespace), one message per payload type and version the topic carries, each message's
payload the whole ``Envelope`` around that payload type, with the schemas pydantic derives
from the models (field descriptions included). ``docs/asyncapi.yaml`` is this document,
committed; a test fails when the two drift apart, and every service serves it at
``/asyncapi.yaml``.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from gpux_contracts.events import TYPE_HEADER, VERSION_HEADER, Envelope, Payload
from gpux_contracts.topics import REGISTRY, Topic

ASYNCAPI_VERSION = "3.0.0"
REF = "#/components/schemas/{model}"


def message_id(payload: type[Payload]) -> str:
    """The id of a payload type's message: ``noun.past_verb.vN``."""
    return f"{payload.event_type}.v{payload.schema_version}"


def _payload_types() -> list[type[Payload]]:
    seen: dict[str, type[Payload]] = {}
    for topic in REGISTRY:
        for payload in topic.payloads:
            seen.setdefault(message_id(payload), payload)
    return [seen[k] for k in sorted(seen)]


def _channel(topic: Topic) -> dict[str, Any]:
    configuration: dict[str, Any] = {"cleanup.policy": [topic.cleanup.value]}
    if topic.retention_ms is not None:
        configuration["retention.ms"] = topic.retention_ms
    return {
        "address": topic.name,
        "title": topic.name,
        "description": f"{topic.description} Key: {topic.key}.",
        "messages": {
            message_id(p): {"$ref": f"#/components/messages/{message_id(p)}"}
            for p in topic.payloads
        },
        "bindings": {
            "kafka": {
                "partitions": topic.partitions,
                "topicConfiguration": configuration,
                "bindingVersion": "0.5.0",
            }
        },
    }


def _headers() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            TYPE_HEADER: {"type": "string", "description": "The payload's `noun.past_verb`."},
            VERSION_HEADER: {"type": "string", "description": "The payload's schema version."},
            "traceparent": {"type": "string", "description": "W3C trace context."},
            "content-type": {"type": "string", "const": "application/json"},
        },
        "required": [TYPE_HEADER, VERSION_HEADER],
    }


def document(version: str = "1") -> dict[str, Any]:
    """The AsyncAPI 3 document of every registry topic and the payloads it carries."""
    payloads = _payload_types()
    envelopes: list[type[Any]] = [Envelope[p] for p in payloads]  # type: ignore[valid-type]
    refs, definitions = models_json_schema(
        [(e, "serialization") for e in envelopes], ref_template=REF
    )
    messages = {}
    for payload, envelope in zip(payloads, envelopes, strict=True):
        messages[message_id(payload)] = {
            "name": payload.event_type,
            "title": payload.__name__,
            "summary": (payload.__doc__ or "").strip().splitlines()[0],
            "contentType": "application/json",
            "headers": _headers(),
            "payload": refs[(envelope, "serialization")],
        }
    return {
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "gpux events",
            "version": version,
            "description": "Every Kafka topic of gpux and the events it carries (generated from"
            " gpux_contracts.topics.REGISTRY; a deployment prefixes each address with its"
            " GPUX_NAMESPACE).",
        },
        "defaultContentType": "application/json",
        "channels": {t.name: _channel(t) for t in REGISTRY},
        "components": {"messages": messages, "schemas": definitions.get("$defs", {})},
    }
