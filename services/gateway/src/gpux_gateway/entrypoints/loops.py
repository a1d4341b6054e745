"""The gateway's timers: idempotent responses past their retention are forgotten, lease access
details past theirs erased; the views'
lag is read for the door of writes (from this process's gauge, or from Kafka when the views
run in processes of their own)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping

from gpux_gateway.entrypoints.backpressure import GroupLag, consumer_lag
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.handoff import service as handoff

log = logging.getLogger("gpux.gateway")


async def purge_once(gw: Gateway) -> int:
    """Forget idempotent responses past their retention; returns how many."""
    async with gw.unit_of_work() as uow:
        removed = await uow.idempotency.purge(uow.now - gw.idempotency_ttl)
        await uow.commit()
    return removed


async def repeat(once: Callable[[], Awaitable[int]], every_s: float, done: str) -> None:
    """Run ``once`` every ``every_s`` until cancelled, logging ``done`` with the count it
    returns when that is not 0."""
    while True:
        count = await once()
        if count:
            log.info(done, extra={"count": count})
        await asyncio.sleep(every_s)


async def purge_loop(gw: Gateway, every_s: float = 3600) -> None:
    """Purge hourly, until cancelled."""
    await repeat(lambda: purge_once(gw), every_s, "idempotency records purged")


async def erase_access_once(gw: Gateway) -> int:
    """Erase the access details of leases that ended or failed more than
    ``GPUX_ACCESS_RETENTION_S`` ago (one set-based statement); returns how many."""
    async with gw.unit_of_work() as uow:
        erased = await handoff.erase_expired(uow, gw.settings.access_retention_s)
        await uow.commit()
    return erased


async def erase_access_loop(gw: Gateway, every_s: float = 60) -> None:
    """Erase expired access details every minute, until cancelled."""
    await repeat(lambda: erase_access_once(gw), every_s, "lease access details erased")


async def lag_loop(gw: Gateway, topics: Collection[str], every_s: float = 0.5) -> None:
    """Read this process's view consumers' lag (its gauge) for the door of writes, until
    cancelled."""

    async def gauge() -> Mapping[str, int]:
        return consumer_lag(topics)

    await follow_lag(gw, gauge, every_s)


async def group_lag_loop(gw: Gateway, groups: Mapping[str, str], every_s: float = 1.0) -> None:
    """Read the view groups' lag from Kafka (``groups``: topic → group, physical names) for the
    door of writes, until cancelled: the views run in processes of their own."""
    async with GroupLag(gw.settings, groups) as lag:
        await follow_lag(gw, lag.read, every_s)


async def follow_lag(
    gw: Gateway, read: Callable[[], Awaitable[Mapping[str, int]]], every_s: float
) -> None:
    """Give the door of writes a new reading of the lag every ``every_s``, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        gw.writes.take_lag(await read(), loop.time())
        await asyncio.sleep(every_s)
