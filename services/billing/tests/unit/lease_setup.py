"""What the pure lease tests share: where their clock starts, a wallet that never runs short,
the platform's policy, and the charges among a settlement's actions."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from gpux_billing.domain.leases import Charge, Policy

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""Where the tests' leases start, unless a test says otherwise."""
RICH = 10**12
"""Available micro-units that no test's lease runs through."""
POLICY = Policy(fee_bps=1000, runway_s=3600)
"""A 10 % fee, and a low-balance warning when a wallet lasts less than an hour."""


def at(seconds: float) -> datetime:
    """``seconds`` after ``T0``."""
    return T0 + timedelta(seconds=seconds)


def charges(actions: Iterable[object]) -> list[Charge]:
    """The charges among a settlement's actions, in order."""
    return [a for a in actions if isinstance(a, Charge)]
