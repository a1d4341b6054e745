"""Seller reliability: how often a seller delivered what it sold.

Billing decides every outcome that counts, so billing counts (per offer and per seller):

- ``ready_in_time``: a lease became ready before its provisioning deadline (a lease whose
  offer has no provisioning timeout is not measured: it never counts here, though it can
  count ``reclaimed``; a seller whose offers state none has no rate until something counts);
- ``failed``: a lease ended ``failed`` (the seller reported a failure, or the deadline passed);
- ``reclaimed``: the seller reclaimed an interruptible lease (an interruption of cause
  ``reclaimed``; a preemption by an on-demand buyer is not the seller's doing and does not count).

Each lease counts at most once per kind. After a change billing publishes
``reliability.changed`` on the compacted ``billing.reliability`` (key: the offer id) with the
offer's counts and the seller's counts at that moment. Counts only grow, so a reader keeps, per
seller, the counts with the largest ``total`` (``supersedes``): replays and reordering across
partitions never step a seller back. Matching reads the topic whole on every instance (no
group); pricing and the gateway's views read it with a group of their own.

The rate is ``ready_in_time / total``, rounded down to four places (never overstated); a
seller with no counted lease has no rate, and an order's ``min_reliability`` excludes it.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload

RATE_PLACES = Decimal("0.0001")
"""The rate's precision: four places (basis points)."""
BASIS_POINTS = 10_000


class ReliabilityCounts(FrozenModel):
    """Counted leases of one offer or one seller."""

    ready_in_time: int = Field(default=0, ge=0, description="Leases ready before the deadline.")
    failed: int = Field(default=0, ge=0, description="Leases that never became ready.")
    reclaimed: int = Field(default=0, ge=0, description="Leases the seller reclaimed.")

    @property
    def total(self) -> int:
        """Every counted lease."""
        return self.ready_in_time + self.failed + self.reclaimed

    def rate(self) -> Decimal | None:
        """``ready_in_time / total`` rounded down to four places; None with nothing counted."""
        return reliability_rate(self.ready_in_time, self.total)

    def rate_bp(self) -> int | None:
        """The rate in basis points (0..10,000), rounded down; None with nothing counted."""
        if self.total == 0:
            return None
        return self.ready_in_time * BASIS_POINTS // self.total


def reliability_rate(ready_in_time: int, total: int) -> Decimal | None:
    """The one rounding rule of reliability: down to four places; None when ``total`` is 0."""
    if total == 0:
        return None
    return (Decimal(ready_in_time) / Decimal(total)).quantize(RATE_PLACES, rounding=ROUND_DOWN)


def min_reliability_bp(minimum: Decimal | None) -> int | None:
    """An order's ``min_reliability`` (0..1, at most four places) in basis points."""
    if minimum is None:
        return None
    return int(minimum * BASIS_POINTS)


def supersedes(candidate: ReliabilityCounts, current: ReliabilityCounts | None) -> bool:
    """The reliability rule, the same in every reader: counts replace the held ones of a seller
    (or an offer) unless those counted more (counts only grow)."""
    return current is None or candidate.total >= current.total


class ReliabilityChanged(Payload):
    """An offer's and its seller's counts after a lease outcome was counted."""

    event_type: ClassVar[str] = "reliability.changed"
    schema_version: ClassVar[int] = 1

    seller_id: str
    offer_id: str
    offer: ReliabilityCounts = Field(description="This offer's counts.")
    seller: ReliabilityCounts = Field(description="The seller's counts over all its offers.")
    lease_id: str = Field(description="The lease whose outcome was counted last.")
    as_of: AwareDatetime = Field(description="When billing counted it.")
