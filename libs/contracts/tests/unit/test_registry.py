"""The topic registry is complete, and docs/ARCHITECTURE.md's topic table says what it says."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import gpux_contracts
from gpux_contracts.events import Payload
from gpux_contracts.topics import REGISTRY, Cleanup, Topic, by_name

ARCHITECTURE = Path(__file__).resolve().parents[4] / "docs" / "ARCHITECTURE.md"
DAY_MS = 24 * 3600 * 1000
EVENT_NAME = re.compile(r"`([a-z_]+\.[a-z_]+)`")


def every_payload_type() -> set[type[Payload]]:
    found: set[type[Payload]] = set()
    for module in pkgutil.iter_modules(gpux_contracts.__path__):
        loaded = importlib.import_module(f"gpux_contracts.{module.name}")
        for value in vars(loaded).values():
            if isinstance(value, type) and issubclass(value, Payload) and value is not Payload:
                found.add(value)
    return found


def test_every_payload_type_travels_on_a_topic_and_every_topic_carries_one() -> None:
    carried = {p for topic in REGISTRY for p in topic.payloads}
    assert every_payload_type() == carried
    assert all(topic.payloads for topic in REGISTRY)


def test_names_are_unique_and_found_by_name() -> None:
    assert len({t.name for t in REGISTRY}) == len(REGISTRY)
    assert all(by_name(t.name) is t for t in REGISTRY)


def test_a_topic_codec_reads_exactly_its_payload_types() -> None:
    for topic in REGISTRY:
        assert set(topic.codec().payload_types) == set(topic.payloads)


def table_rows() -> list[list[str]]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Topics", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 6:
            rows.append(cells)
    return rows


def cleanup_cell(topic: Topic) -> str:
    if topic.cleanup is Cleanup.COMPACT:
        return "compact"
    assert topic.retention_ms is not None
    assert topic.retention_ms % DAY_MS == 0
    return f"delete ({topic.retention_ms // DAY_MS} d)"


def test_the_architecture_table_lists_the_registry_in_order() -> None:
    assert [row[0].strip("`") for row in table_rows()] == [t.name for t in REGISTRY]


@pytest.mark.parametrize("topic", REGISTRY, ids=lambda t: t.name)
def test_the_architecture_row_matches_the_registry(topic: Topic) -> None:
    row = next(r for r in table_rows() if r[0].strip("`") == topic.name)
    _, key, partitions, cleanup, producers, _ = row
    plain = re.sub(r"\s*\([^)]*\)", "", key).replace("`", "").replace("\\|", "|")
    assert plain == topic.key
    assert int(partitions) == topic.partitions
    assert cleanup == cleanup_cell(topic)
    named = {n for n in EVENT_NAME.findall(producers) if n.count(".") == 1}
    assert named == {p.event_type for p in topic.payloads}
