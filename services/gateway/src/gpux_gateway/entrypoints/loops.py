"""The gateway's housekeeping: idempotent responses past their retention are forgotten."""

from __future__ import annotations

import asyncio
import logging

from gpux_gateway.entrypoints.context import Gateway

log = logging.getLogger("gpux.gateway")


async def purge_once(gw: Gateway) -> int:
    """Forget idempotent responses past their retention; returns how many."""
    async with gw.unit_of_work() as uow:
        removed = await uow.idempotency.purge(uow.now - gw.idempotency_ttl)
        await uow.commit()
    return removed


async def purge_loop(gw: Gateway, every_s: float = 3600) -> None:
    """Purge hourly, until cancelled."""
    while True:
        removed = await purge_once(gw)
        if removed:
            log.info("idempotency records purged", extra={"count": removed})
        await asyncio.sleep(every_s)
