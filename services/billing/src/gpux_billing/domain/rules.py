"""The operator's settings that billing's handlers apply, in one value (built by config)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpux_billing.domain.holds import HoldPolicy
from gpux_billing.domain.leases import Policy


@dataclass(frozen=True, slots=True)
class Rules:
    """What the handlers need from the settings."""

    lease: Policy = field(default_factory=Policy)
    """Fees and the low-balance runway of leases."""
    hold: HoldPolicy = field(default_factory=HoldPolicy)
    """Market orders' slippage and the age of a rate that still funds a hold."""
    settle_every_s: int = 60
    """The settlement period of per-second leases."""
    dev_topups: bool = False
    """Whether the ``dev`` top-up provider books at once (local demos only)."""
    payout_minimum_micros: int = 10_000_000
    """The smallest payout a seller may ask for, in micro-units of any currency."""
