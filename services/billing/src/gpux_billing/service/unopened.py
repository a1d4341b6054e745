"""Commands about one lease that may come before billing has opened it (its trade, on
market.trades, another consumer, may lag): the book's interruption, the seller's reports.

Such a command is never dropped: for a lease billing does not know yet it is kept for the
lease's id (the first one stands) and acknowledged, and the trade that opens the lease takes
it; both sides lock the lease's id first (``service.locking``), so neither misses the other.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gpux_billing.domain.leases import Lease
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseKey

C = TypeVar("C", bound=LeaseKey)

Keep = Callable[[BillingUnitOfWork, Envelope[C]], Awaitable[None]]
"""Keeps a command for the trade of a lease not opened yet."""
OnLease = Callable[[BillingUnitOfWork, Lease, Envelope[C]], Awaitable[None]]
"""Applies a command to its lease, which billing has opened."""
Handler = Callable[[BillingUnitOfWork, Envelope[C]], Awaitable[None]]
"""A command's handler, as ``service.HANDLERS_BY_TOPIC`` lists it."""


def log_kept(log: logging.Logger, what: str, kept: bool, event: Envelope[C]) -> None:
    """Log what became of a command for a lease not opened yet: kept, or one stood already."""
    log.info(
        "%s of a lease not opened yet %s",
        what,
        "kept for its trade" if kept else "ignored: one is kept already",
        extra={"lease_id": event.payload.lease_id, "event_id": event.event_id},
    )


def kept_until_opened(keep: Keep[Any]) -> Callable[[OnLease[C]], Handler[C]]:
    """A command's handler from what it does to its lease: that, once billing has opened the
    lease; before, ``keep`` keeps the command for the lease's trade. The handler takes the
    command ``apply`` takes (``keep`` may serve several), and bears its name."""

    def handler_of(apply: OnLease[C]) -> Handler[C]:
        async def handler(uow: BillingUnitOfWork, event: Envelope[C]) -> None:
            lease = await uow.leases.get(event.payload.lease_id)
            if lease is None:
                await keep(uow, event)
                return
            await apply(uow, lease, event)

        handler.__name__, handler.__qualname__ = apply.__name__, apply.__qualname__
        handler.__doc__ = apply.__doc__
        return handler

    return handler_of
