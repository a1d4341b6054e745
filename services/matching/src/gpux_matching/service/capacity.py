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
from collections.abc import Callable

from gpux_contracts.capacity import LeaseReclaimRequested, LeaseReleased
from gpux_contracts.events import Envelope
from gpux_matching.domain import ReclaimLease, ReleaseLease
from gpux_matching.service.partition import execute
from gpux_matching.service.unit_of_work import BookUnitOfWork

log = logging.getLogger("gpux.matching")


async def on_released(uow: BookUnitOfWork, event: Envelope[LeaseReleased]) -> None:
    """Give an ended lease's GPUs back to its offer (nothing when the offer left the book)."""
    released = event.payload
    _on_pool(
        uow,
        event,
        lambda now: ReleaseLease(
            now=now, lease_id=released.lease_id, offer_id=released.offer_id, gpus=released.gpus
        ),
        level=logging.DEBUG,
        off_book="release of a lease on an offer off the book",
        refused="release of a lease the book does not hold",
    )


async def on_reclaim_requested(uow: BookUnitOfWork, event: Envelope[LeaseReclaimRequested]) -> None:
    """Interrupt an interruptible lease for its seller, with the offer's notice."""
    reclaim = event.payload
    _on_pool(
        uow,
        event,
        lambda now: ReclaimLease(now=now, offer_id=reclaim.offer_id, lease_id=reclaim.lease_id),
        level=logging.INFO,
        off_book="reclaim of a lease on an offer off the book",
        refused="reclaim refused by the book",
    )


def _on_pool(
    uow: BookUnitOfWork,
    event: Envelope[LeaseReleased] | Envelope[LeaseReclaimRequested],
    command: Callable[[int], ReleaseLease | ReclaimLease],
    *,
    level: int,
    off_book: str,
    refused: str,
) -> None:
    """Apply a command about one lease of an offer's pool, made at the partition's clock;
    an offer off the book, or a lease the book refuses, is logged at ``level`` and dropped."""
    lease_id, offer_id = event.payload.lease_id, event.payload.offer_id
    if uow.partition.engine.pool(offer_id) is None:
        log.log(level, off_book, extra={"lease_id": lease_id, "offer_id": offer_id})
        return
    result = execute(uow, command(uow.partition.now_micros()), event)
    if result.rejection is not None:
        log.log(level, refused, extra={"lease_id": lease_id, "reason": str(result.rejection)})
