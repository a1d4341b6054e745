"""What pricing runs beside its consumers: the FX loader (at start, then on a timer) and the
read models' rebuild at start."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from faststream.kafka import KafkaBroker

from gpux_platform.broker import publish_many
from gpux_platform.clock import Clock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.entrypoints.kafka import UnitOfWorkFactory
from gpux_pricing.service import fx
from gpux_pricing.service.unit_of_work import ReadModels

log = logging.getLogger("gpux.pricing.fx")


async def load_fx_rates(
    broker: KafkaBroker, settings: GpuxSettings, path: Path, clock: Clock
) -> None:
    """Publish the FX file's rates to the compacted ``fx.rates`` (a replay is harmless)."""
    await publish_many(
        broker, settings, fx.rate_messages(fx.read_rates(path, clock.now()), clock.now())
    )


async def refresh_fx_rates(
    broker: KafkaBroker, settings: GpuxSettings, path: Path, clock: Clock, every_s: float
) -> None:
    """Read the FX file again and republish it every ``every_s`` (a file without ``as_of`` is
    stamped anew each time, so its rates stay fresh; one with ``as_of`` republishes the same
    events). A file that cannot be read is logged and the last rates stay."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await load_fx_rates(broker, settings, path, clock)
        except (OSError, ValueError, KeyError):
            log.exception("the FX file could not be read; the last rates stay")


async def rebuild_read_models(
    unit_of_work: UnitOfWorkFactory, read_models: ReadModels, clock: Clock
) -> None:
    """Write every book's quotes and history to the read models from PostgreSQL.

    A restart republishes nothing to Kafka (the compacted topic already holds the quotes),
    but Redis may have lost what it held; PostgreSQL is the source of truth.
    """
    async with unit_of_work() as uow:
        # Written while the unit holds the books, so no consumer's newer write goes first.
        quotes = await uow.books.current(await uow.offers.books())
        await read_models.write_quotes(quotes, stream=False)
        now = clock.now()
        histories = [await uow.history.snapshot(book, now) for book in await uow.trades.books()]
        await read_models.write_histories(histories)
        await uow.commit()
