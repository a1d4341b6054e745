"""FX rates: the default source (a file, published to the compacted ``fx.rates`` at start and
again every ``fx_refresh_s``) and the newest rate of each currency, which ranks offers and
converts prices."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from gpux_contracts.events import Envelope, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.money import REFERENCE_CURRENCY, Currency
from gpux_contracts.topics import FX_RATES
from gpux_platform.broker import Outgoing
from gpux_pricing.domain.fx import Rate
from gpux_pricing.service.outgoing import PRODUCER
from gpux_pricing.service.unit_of_work import PricingUnitOfWork


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
