"""Billing's ``reliability.changed`` as both reliability suites send it (the service tests on
the memory unit of work, the integration tests through PostgreSQL and Kafka)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts


def counts(ready: int, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    """A seller's (or an offer's) leases counted, by outcome."""
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


def reliability_changed(
    seller_id: str, seller: ReliabilityCounts, offer_id: str, *, at: datetime
) -> Envelope[Any]:
    """Billing counted a lease of ``offer_id`` at ``at``: the seller's counts (and, here, the
    offer's) are now ``seller``."""
    payload = ReliabilityChanged(
        seller_id=seller_id,
        offer_id=offer_id,
        offer=seller,
        seller=seller,
        lease_id=new_id(),
        as_of=at,
    )
    return wrap(payload, producer="billing", occurred_at=at)
