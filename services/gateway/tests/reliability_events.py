"""Billing's ``reliability.changed`` as the gateway's reliability tests build it: the counts of
an offer and of its seller after one of the offer's leases was counted."""

from __future__ import annotations

from datetime import datetime

from gpux_contracts.ids import new_id
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts
from gpux_gateway.adapters.memory.unit_of_work import EPOCH


def counts(ready: int = 0, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    """An offer's (or a seller's) leases counted, by outcome."""
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


def reliability_changed(
    seller_id: str,
    offer_id: str,
    offer: ReliabilityCounts,
    seller: ReliabilityCounts,
    *,
    lease_id: str | None = None,
    as_of: datetime = EPOCH,
) -> ReliabilityChanged:
    """The offer's and its seller's counts as of ``as_of``, after a lease (a new id unless
    ``lease_id``) was counted."""
    return ReliabilityChanged(
        seller_id=seller_id,
        offer_id=offer_id,
        offer=offer,
        seller=seller,
        lease_id=new_id() if lease_id is None else lease_id,
        as_of=as_of,
    )
