"""Offers' capacity on the book: leases that ended (billing) and sellers' reclaims (gateway).

Both arrive on ``capacity.commands``, keyed by GPU id like the offers, so the partition that
holds an offer also gets its leases' ends. A ``lease.released`` lets the lease go: its GPUs
go to the trades that preempted it, the rest are free again and meet resting bids. One the
book does not know on a live offer (the offer was withdrawn or expired, the lease was sold
before capacity, a replay) changes nothing and is not an error. A ``lease.reclaim_requested``
interrupts an interruptible lease with the offer's notice (``lease.interruption_requested``
to billing, at commit); one the book cannot honour (unknown, on demand, already being
interrupted) is logged and dropped: the gateway checked it, so it is a race, not a fault.
"""

from __future__ import annotations

import logging

from gpux_contracts.capacity import LeaseReclaimRequested, LeaseReleased
from gpux_contracts.events import Envelope
from gpux_matching.domain import ReclaimLease, ReleaseLease, epoch_micros
from gpux_matching.service.partition import execute
from gpux_matching.service.unit_of_work import BookUnitOfWork

log = logging.getLogger("gpux.matching")


async def on_released(uow: BookUnitOfWork, event: Envelope[LeaseReleased]) -> None:
    """Give an ended lease's GPUs back to its offer (nothing when the offer left the book)."""
    released = event.payload
    if uow.partition.engine.pool(released.offer_id) is None:
        log.debug(
            "release of a lease on an offer off the book",
            extra={"lease_id": released.lease_id, "offer_id": released.offer_id},
        )
        return
    now = epoch_micros(uow.partition.clock.now())
    command = ReleaseLease(
        now=now, lease_id=released.lease_id, offer_id=released.offer_id, gpus=released.gpus
    )
    result = execute(uow, command, event)
    if result.rejection is not None:
        log.debug(
            "release of a lease the book does not hold",
            extra={"lease_id": released.lease_id, "reason": str(result.rejection)},
        )


async def on_reclaim_requested(uow: BookUnitOfWork, event: Envelope[LeaseReclaimRequested]) -> None:
    """Interrupt an interruptible lease for its seller, with the offer's notice."""
    reclaim = event.payload
    if uow.partition.engine.pool(reclaim.offer_id) is None:
        log.info(
            "reclaim of a lease on an offer off the book",
            extra={"lease_id": reclaim.lease_id, "offer_id": reclaim.offer_id},
        )
        return
    now = epoch_micros(uow.partition.clock.now())
    command = ReclaimLease(now=now, offer_id=reclaim.offer_id, lease_id=reclaim.lease_id)
    result = execute(uow, command, event)
    if result.rejection is not None:
        log.info(
            "reclaim refused by the book",
            extra={"lease_id": reclaim.lease_id, "reason": str(result.rejection)},
        )
