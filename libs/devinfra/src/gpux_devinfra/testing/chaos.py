"""Faults injected at seeded random moments, and the report of a chaos run.

A ``Target`` is anything that can be taken down and brought up again: a service process
(down: SIGKILL; up: start it again) or a private store (down: stop; up: start, returning once
it answers). ``plan`` draws, from one seed, the order in which every target is hit once, the
pause before each fault and how long each stays down; ``inject`` carries the plan out and
records every fault (what, when, how long) in the ``ChaosReport``, which also holds every
invariant checked with its result, and is printed and written as JSON at the end. The seed
comes from ``GPUX_CHAOS_SEED`` when set, so a failing run can be replayed.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

SEED_VARIABLE = "GPUX_CHAOS_SEED"


def chaos_seed(environ: Mapping[str, str] = os.environ) -> int:
    """``GPUX_CHAOS_SEED`` when set (to replay a run), else a fresh random seed."""
    given = environ.get(SEED_VARIABLE, "").strip()
    return int(given) if given else random.SystemRandom().randrange(1, 2**31)


@dataclass(frozen=True)
class Target:
    """Something a fault takes down and brings back: ``kind`` says how (``SIGKILL`` of a
    process, ``stop`` of a store)."""

    name: str
    kind: str
    down: Callable[[], Awaitable[None]]
    up: Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Step:
    """One planned fault: after ``pause_s``, take ``target`` down for ``down_s``."""

    target: str
    pause_s: float
    down_s: float


def plan(
    rng: random.Random,
    targets: Sequence[str],
    *,
    pause_s: tuple[float, float],
    down_s: tuple[float, float],
) -> list[Step]:
    """Every target once, in a random order, each after a random pause (uniform within
    ``pause_s``) and down for a random while (within ``down_s``)."""
    order = list(targets)
    rng.shuffle(order)
    return [
        Step(name, round(rng.uniform(*pause_s), 2), round(rng.uniform(*down_s), 2))
        for name in order
    ]


@dataclass(frozen=True)
class Fault:
    """A fault as it happened: seconds from the run's start when it went down and came back
    up (``up_at_s``: when its ``up`` returned)."""

    target: str
    kind: str
    down_at_s: float
    down_s: float
    up_at_s: float


@dataclass(frozen=True)
class Check:
    """One invariant checked after the faults, with what was found."""

    name: str
    ok: bool
    detail: str


@dataclass
class ChaosReport:
    """Everything a chaos run did and found: its seed, its faults, its checks."""

    seed: int
    faults: list[Fault] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: dict[str, object] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    """When the run started (UTC); every time in the report is in seconds from then."""

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return round(time.monotonic() - self.started, 2)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        """Record an invariant's result (the last result of a name replaces earlier ones)."""
        self.checks = [c for c in self.checks if c.name != name]
        self.checks.append(Check(name, ok, detail))
        return ok

    @property
    def ok(self) -> bool:
        """Every invariant held."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def render(self) -> str:
        """The report as text: the seed, each fault, each invariant."""
        lines = [
            f"chaos seed {self.seed} (replay: {SEED_VARIABLE}={self.seed}),"
            f" started {self.started_at}",
            "faults (seconds from the start):",
        ]
        lines += [
            f"  {f.down_at_s:7.2f} s  {f.kind:<7} {f.target:<14} down {f.down_s:.2f} s,"
            f" up at {f.up_at_s:.2f} s"
            for f in self.faults
        ]
        lines.append("invariants:")
        lines += [
            f"  {'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}"[:2000] for c in self.checks
        ]
        lines += [f"  {name}: {value}" for name, value in self.notes.items()]
        return "\n".join(lines)

    def write(self, path: Path) -> None:
        """The report as JSON at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {
            "seed": self.seed,
            "started_at": self.started_at,
            "faults": [asdict(f) for f in self.faults],
            "checks": [asdict(c) for c in self.checks],
            "notes": self.notes,
        }
        path.write_text(json.dumps(body, indent=2, default=str))


async def inject(steps: Sequence[Step], targets: Mapping[str, Target], report: ChaosReport) -> None:
    """Carry out ``steps`` one after another, each recorded in ``report`` once it is up."""
    for step in steps:
        await asyncio.sleep(step.pause_s)
        target = targets[step.target]
        down_at = report.elapsed()
        await target.down()
        await asyncio.sleep(step.down_s)
        await target.up()
        report.faults.append(
            Fault(target.name, target.kind, down_at, step.down_s, report.elapsed())
        )
