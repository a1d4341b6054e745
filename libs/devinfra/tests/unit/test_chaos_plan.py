"""The chaos suite's plan and report: seeded, every target hit once, every fault recorded."""

from __future__ import annotations

import json
import random
from pathlib import Path

from gpux_devinfra.testing.chaos import (
    SEED_VARIABLE,
    ChaosReport,
    Step,
    Target,
    chaos_seed,
    inject,
    plan,
)

NAMES = ["billing", "catalog", "gateway", "kafka", "postgres", "redis"]


def test_a_seed_plans_every_target_once_within_the_bounds() -> None:
    steps = plan(random.Random(7), NAMES, pause_s=(1, 4), down_s=(0.5, 3))

    assert sorted(s.target for s in steps) == NAMES
    assert all(1 <= s.pause_s <= 4 and 0.5 <= s.down_s <= 3 for s in steps)


def test_the_same_seed_plans_the_same_faults() -> None:
    first = plan(random.Random(7), NAMES, pause_s=(1, 4), down_s=(0.5, 3))
    again = plan(random.Random(7), NAMES, pause_s=(1, 4), down_s=(0.5, 3))

    assert first == again


def test_the_seed_is_taken_from_the_environment_when_given() -> None:
    assert chaos_seed({SEED_VARIABLE: "1234"}) == 1234
    assert chaos_seed({}) >= 1


async def test_inject_takes_each_target_down_then_up_and_records_it(tmp_path: Path) -> None:
    calls: list[str] = []

    def target(name: str) -> Target:
        async def down() -> None:
            calls.append(f"down {name}")

        async def up() -> None:
            calls.append(f"up {name}")

        return Target(name, "stop", down, up)

    report = ChaosReport(seed=42)
    steps = [Step("redis", 0, 0), Step("kafka", 0, 0.01)]
    await inject(steps, {"redis": target("redis"), "kafka": target("kafka")}, report)
    report.check("ledger balances", True, "zero")
    report.check("ledger balances", False, "rechecked: the last result counts")
    report.write(tmp_path / "report.json")

    assert calls == ["down redis", "up redis", "down kafka", "up kafka"]
    assert [(f.target, f.down_s) for f in report.faults] == [("redis", 0), ("kafka", 0.01)]
    written = json.loads((tmp_path / "report.json").read_text())
    assert written["seed"] == 42
    assert [f["target"] for f in written["faults"]] == ["redis", "kafka"]
    assert written["checks"] == [
        {"name": "ledger balances", "ok": False, "detail": "rechecked: the last result counts"}
    ]
    assert not report.ok
    assert "GPUX_CHAOS_SEED=42" in report.render()
