"""The account events' retention: a timer deletes events older than
``GPUX_ACCOUNT_EVENTS_RETENTION_S`` whose webhook deliveries are all finished (a delivery
still pending keeps its event, however old)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from gpux_gateway.service.unit_of_work import UnitOfWorkFactory

log = logging.getLogger("gpux.gateway.notifications")

PURGE_BATCH = 5_000
"""Most events one transaction deletes (the next runs at once while there are more)."""
EVERY_S = 600.0


async def purge_once(units: UnitOfWorkFactory, retention_s: int) -> int:
    """Delete the events past their retention, a batch per transaction; returns how many."""
    total = 0
    while True:
        async with units() as uow:
            removed = await uow.account_events.purge(
                uow.now - timedelta(seconds=retention_s), PURGE_BATCH
            )
            await uow.commit()
        total += removed
        if removed < PURGE_BATCH:
            return total


async def purge_loop(units: UnitOfWorkFactory, retention_s: int, every_s: float = EVERY_S) -> None:
    """Purge every ``every_s``, until cancelled."""
    while True:
        removed = await purge_once(units, retention_s)
        if removed:
            log.info("account events purged", extra={"count": removed})
        await asyncio.sleep(every_s)
