"""What pricing runs beside its consumers: the FX loader and the read models' rebuild, at start."""

from __future__ import annotations

from collections.abc import Sequence

from faststream.kafka import KafkaBroker

from gpux_contracts.fx import RatePublished
from gpux_platform.broker import publish_many
from gpux_platform.clock import Clock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.entrypoints.kafka import UnitOfWorkFactory
from gpux_pricing.service import fx
from gpux_pricing.service.unit_of_work import ReadModels


async def load_fx_rates(
    broker: KafkaBroker, settings: GpuxSettings, rates: Sequence[RatePublished], clock: Clock
) -> None:
    """Publish the FX file's rates to the compacted ``fx.rates`` (a replay is harmless)."""
    await publish_many(broker, settings, fx.rate_messages(rates, clock.now()))


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
