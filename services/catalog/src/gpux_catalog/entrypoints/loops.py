"""The publication check: once at start-up, then every ``publish_check_s`` seconds.

Each check is one unit of work: the versions recorded and the records queued commit
together, and the outbox relay publishes the records afterwards. The periodic check
honours an operator who deleted a version record to force a republish (e.g. after the
topic was recreated), and retries a check that failed (PostgreSQL away).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime

from gpux_catalog.domain.publication import PublishedVersion
from gpux_catalog.service.publication import sync_catalog
from gpux_catalog.service.unit_of_work import CatalogUnitOfWork
from gpux_estimator import GpuCatalog, ModelCatalog

log = logging.getLogger("gpux.catalog")

UnitOfWorkFactory = Callable[[], AbstractAsyncContextManager[CatalogUnitOfWork]]
"""Opens a new catalog unit of work."""


async def check(
    unit_of_work: UnitOfWorkFactory, *, gpus: GpuCatalog, models: ModelCatalog, now: datetime
) -> dict[str, PublishedVersion]:
    """Publish, through the outbox, each catalog topic whose data is newer than what it holds;
    returns those topics (logical names) with what they now hold."""
    async with unit_of_work() as uow:
        queued = await sync_catalog(uow, gpus=gpus, models=models, now=now)
        await uow.commit()
    for topic, version in queued.items():
        log.info(
            "catalog published",
            extra={"topic": topic, "data_version": version.data_version, "items": version.items},
        )
    return queued


async def resync_loop(sync: Callable[[], Awaitable[object]], every_s: float) -> None:
    """Check again every ``every_s`` seconds until cancelled; a failure is retried next time."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await sync()
        except Exception as exc:  # PostgreSQL away: the next check tries again
            log.warning("catalog publish check failed", extra={"error": repr(exc)})
