"""What pricing runs beside its consumers: the FX loader (at start, then on a timer), the
watch on the held rates' ages, and the read models' rebuild (at start, and whenever Redis may
have lost them)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from prometheus_client import Counter, Gauge

from gpux_contracts.money import REFERENCE_CURRENCY, Currency
from gpux_platform.broker import Outgoing
from gpux_platform.clock import Clock
from gpux_pricing.entrypoints.kafka import UnitOfWorkFactory
from gpux_pricing.service import fx
from gpux_pricing.service.fx import RateSource, RateSourceError
from gpux_pricing.service.unit_of_work import ReadModels

log = logging.getLogger("gpux.pricing.fx")
read_models_log = logging.getLogger("gpux.pricing.read_models")

FX_RATE_AGE = Gauge(
    "gpux_fx_rate_age_seconds",
    "Age of the newest FX rate pricing holds, by currency (now minus its as_of); billing"
    " refuses holds in a currency whose rate is older than its GPUX_FX_MAX_AGE_S (7 days).",
    ("currency",),
)
FX_READS = Counter(
    "gpux_fx_reads_total",
    "Reads of the FX source by source and outcome (published: its rates sent to fx.rates;"
    " failed: none this time, the last rates stay).",
    ("source", "outcome"),
)

READ_MODEL_REBUILDS = Counter(
    "gpux_pricing_read_model_rebuilds_total",
    "Rebuilds of pricing's read models in Redis from PostgreSQL, by why (start; lost: a write"
    " failed or Redis restarted empty since the last rebuild).",
    ("reason",),
)

Publish = Callable[[Sequence[Outgoing]], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class FxLoader:
    """Reads a rate source and publishes its rates to the compacted ``fx.rates``."""

    source: RateSource
    unit_of_work: UnitOfWorkFactory
    publish: Publish
    clock: Clock

    async def load(self) -> bool:
        """Read the source once and publish its rates that are not older than those pricing
        holds (a replay is harmless: same rate and time, same event id); False when the
        source gave none (logged and counted: the rates published before stay)."""
        try:
            rates = await self.source.fetch(self.clock.now())
        except RateSourceError as exc:
            FX_READS.labels(self.source.name, "failed").inc()
            log.warning(
                "FX rates from %s: none this time, the last rates stay: %s", self.source.name, exc
            )
            return False
        async with self.unit_of_work() as uow:
            held = await uow.rates.table()
        fresh = fx.not_older(rates, held)
        await self.publish(fx.rate_messages(fresh, self.clock.now()))
        FX_READS.labels(self.source.name, "published").inc()
        log.info(
            "FX rates from %s: %s",
            self.source.name,
            ", ".join(f"{r.base}/{r.quote} {r.rate} as of {r.as_of.isoformat()}" for r in fresh)
            or "none newer than those held",
        )
        return True

    async def run(
        self, every_s: float, retry_s: float, *, first_s: float = 0, sleep: Sleep = asyncio.sleep
    ) -> None:
        """Load after ``first_s``, then every ``every_s``, or ``retry_s`` after a failure (a
        broker that refuses the rates is logged too: the loop never stops)."""
        wait_s = first_s
        while True:
            await sleep(wait_s)
            try:
                loaded = await self.load()
            except Exception:
                FX_READS.labels(self.source.name, "failed").inc()
                log.exception("FX rates from %s could not be published", self.source.name)
                loaded = False
            wait_s = every_s if loaded else retry_s


async def check_fx_ages(
    unit_of_work: UnitOfWorkFactory, clock: Clock, warn_after: timedelta
) -> list[Currency]:
    """Set each held rate's age on ``gpux_fx_rate_age_seconds`` and warn of those older than
    ``warn_after`` and of currencies without a rate; returns the currencies warned of."""
    async with unit_of_work() as uow:
        held = await uow.rates.table()
    ages = fx.rate_ages(held, clock.now())
    warned = []
    for currency, age in ages.items():
        FX_RATE_AGE.labels(currency.value).set(age.total_seconds())
        if age > warn_after:
            warned.append(currency)
            log.warning(
                "the %s/%s rate is %.1f h old (as of %s, warned past %.1f h): billing refuses"
                " holds in %s once it is older than its GPUX_FX_MAX_AGE_S; check GPUX_FX_SOURCE",
                currency,
                REFERENCE_CURRENCY,
                age.total_seconds() / 3600,
                held.to_reference[currency].as_of.isoformat(),
                warn_after.total_seconds() / 3600,
                currency,
            )
    for currency in Currency:
        if currency is not REFERENCE_CURRENCY and currency not in ages:
            warned.append(currency)
            log.warning(
                "no %s/%s rate is held: prices in %s cannot be ranked",
                currency,
                REFERENCE_CURRENCY,
                currency,
            )
    return warned


async def watch_fx_ages(
    unit_of_work: UnitOfWorkFactory,
    clock: Clock,
    warn_after: timedelta,
    every_s: float,
    sleep: Sleep = asyncio.sleep,
) -> None:
    """``check_fx_ages`` every ``every_s`` (first after one period: the rates are read at
    start); a failed check is logged and the next one comes as planned."""
    while True:
        await sleep(every_s)
        try:
            await check_fx_ages(unit_of_work, clock, warn_after)
        except Exception:
            log.exception("the FX rates' ages could not be checked")


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
        histories = await uow.history.snapshots_at(dict.fromkeys(await uow.trades.books(), now))
        await read_models.write_histories(histories)
        await uow.commit()


class WatchedReadModels(ReadModels, Protocol):
    """Read models that tell when they may have lost a write (``RedisReadModels``)."""

    @property
    def failed_writes(self) -> int:
        """Writes that failed so far."""
        ...

    async def lost(self) -> bool:
        """Whether a write may be missing since the last rebuild."""
        ...

    async def rebuilt(self, failed_writes: int) -> None:
        """Mark a rebuild done that started after ``failed_writes`` failed writes."""
        ...


async def rebuild_watched(
    unit_of_work: UnitOfWorkFactory, read_models: WatchedReadModels, clock: Clock, reason: str
) -> None:
    """``rebuild_read_models``, then marked done (a rebuild that fails stays undone)."""
    failed_writes = read_models.failed_writes
    await rebuild_read_models(unit_of_work, read_models, clock)
    await read_models.rebuilt(failed_writes)
    READ_MODEL_REBUILDS.labels(reason).inc()


async def watch_read_models(
    rebuild: Callable[[], Awaitable[None]],
    read_models: WatchedReadModels,
    every_s: float,
    sleep: Sleep = asyncio.sleep,
) -> None:
    """Every ``every_s``, ``rebuild`` the read models if they may have lost a write: a book
    that no longer changes would otherwise show what Redis lost (nothing, after a restart of
    Redis without persistence) until pricing restarts. A failed check or rebuild (Redis or
    PostgreSQL away) is logged and tried again at the next."""
    while True:
        await sleep(every_s)
        try:
            if await read_models.lost():
                read_models_log.warning("the read models may have lost writes: rebuilding them")
                await rebuild()
        except Exception:
            read_models_log.exception(
                "the read models could not be rebuilt; trying again in %s s", every_s
            )
