"""FX rates: their sources (a file, the development default, or the ECB's reference rates:
``adapters.ecb``), published to the compacted ``fx.rates`` at start and again every
``fx_refresh_s``, and the newest rate of each currency, which ranks offers and converts
prices."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Protocol

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.fx import RatePublished, supersedes
from gpux_contracts.ids import stable_id
from gpux_contracts.money import REFERENCE_CURRENCY, Currency
from gpux_contracts.topics import FX_RATES
from gpux_platform.broker import Outgoing
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.service.outgoing import PRODUCER
from gpux_pricing.service.unit_of_work import PricingUnitOfWork


class RateSourceError(Exception):
    """A source that gave no rates this time (unreachable, refused, unreadable); the rates
    published before stay in force."""


class RateSource(Protocol):
    """Where the FX loader takes its rates from."""

    @property
    def name(self) -> str:
        """The source's name in logs and metrics (``file``, ``ecb``)."""
        ...

    async def fetch(self, now: datetime) -> list[RatePublished]:
        """The source's current rates into the reference currency (``RateSourceError`` if it
        has none to give now)."""
        ...


@dataclass(frozen=True, slots=True)
class FileRates:
    """A rates file (``read_rates``): the development default, or a snapshot with ``as_of``."""

    path: Path
    name: str = "file"

    async def fetch(self, now: datetime) -> list[RatePublished]:
        """The file's rates, read now (stamped ``now`` if it has no ``as_of``)."""
        try:
            return read_rates(self.path, now)
        except (OSError, ValueError, KeyError) as exc:
            raise RateSourceError(f"{self.path}: {exc}") from exc


async def on_rate_published(uow: PricingUnitOfWork, event: Envelope[RatePublished]) -> None:
    """Keep the newest FX rate per currency."""
    rate = event.payload
    await uow.rates.upsert(Rate(rate.base, rate.quote, rate.rate, rate.as_of))


def read_rates(path: Path, now: datetime) -> list[RatePublished]:
    """The rates a file holds (units of the reference currency per unit).

    A file with ``as_of`` is a snapshot: its rates carry that time. A file without one is a
    development source (the default file): its rates are stamped ``now``, the time they are
    read, so they never age past billing's staleness limit while the loader republishes them.
    """
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    as_of = data.get("as_of", now)
    if not isinstance(as_of, datetime) or as_of.tzinfo is None:
        raise ValueError(f"{path}: as_of must be an RFC 3339 time with an offset")
    return [
        RatePublished(
            base=Currency(code),
            quote=REFERENCE_CURRENCY,
            rate=Decimal(str(value)),
            as_of=as_of.astimezone(UTC),
            source=str(data.get("source", path.name))[:200],
        )
        for code, value in sorted(data["rates"].items())
    ]


def stamped_on_read(path: Path) -> bool:
    """Whether a rates file is a development source (no ``as_of``: stamped when read)."""
    return "as_of" not in tomllib.loads(path.read_text(encoding="utf-8"))


def rate_messages(rates: Sequence[RatePublished], now: datetime) -> list[Outgoing]:
    """The rates as records; the same rate and time give the same event id (a replay is
    harmless)."""
    messages = []
    for rate in rates:
        key = f"{rate.base}/{rate.quote}"
        event_id = stable_id("fx", key, rate.as_of.isoformat(), format(rate.rate, "f"))
        envelope = wrap(rate, producer=PRODUCER, occurred_at=now, event_id=event_id)
        messages.append(Outgoing(FX_RATES, key, envelope))
    return messages


def not_older(rates: Sequence[RatePublished], held: RateTable) -> list[RatePublished]:
    """The rates that may be published over those pricing holds (the FX rule): none older
    than the rate held for its pair, so that a source republishing yesterday's rate never
    becomes the last record of a pair on the compacted topic after an admin's newer one."""
    return [
        rate
        for rate in rates
        if supersedes(
            rate.as_of, None if (h := held.to_reference.get(rate.base)) is None else h.as_of
        )
    ]


def rate_ages(held: RateTable, now: datetime) -> dict[Currency, timedelta]:
    """How old each held rate is at ``now``."""
    return {currency: now - rate.as_of for currency, rate in sorted(held.to_reference.items())}
