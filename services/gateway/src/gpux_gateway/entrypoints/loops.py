"""The gateway's timers: idempotent responses past their retention are forgotten; the views'
lag is read for the door of writes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection

from gpux_gateway.entrypoints.backpressure import consumer_lag
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


async def lag_loop(gw: Gateway, topics: Collection[str], every_s: float = 0.5) -> None:
    """Read the view consumers' lag for the door of writes, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        gw.writes.take_lag(consumer_lag(topics), loop.time())
        await asyncio.sleep(every_s)
