"""The default FX source: rates from a file, published to the compacted ``fx.rates``."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from faststream.kafka import KafkaBroker

from gpux_contracts.events import wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency
from gpux_contracts.topics import FX_RATES
from gpux_platform.broker import Outgoing, publish_many
from gpux_platform.settings import GpuxSettings
from gpux_pricing.domain.fx import REFERENCE


def read_rates(path: Path) -> list[RatePublished]:
    """The rates a file holds (units of the reference currency per unit)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    as_of = data["as_of"]
    if not isinstance(as_of, datetime) or as_of.tzinfo is None:
        raise ValueError(f"{path}: as_of must be an RFC 3339 time with an offset")
    return [
        RatePublished(
            base=Currency(code),
            quote=REFERENCE,
            rate=Decimal(str(value)),
            as_of=as_of.astimezone(UTC),
            source=str(data.get("source", path.name))[:200],
        )
        for code, value in sorted(data["rates"].items())
    ]


async def publish_rates(
    broker: KafkaBroker, settings: GpuxSettings, rates: list[RatePublished], now: datetime
) -> None:
    """Publish rates; the same rate and time give the same event id (a replay is harmless)."""
    messages = []
    for rate in rates:
        key = f"{rate.base}/{rate.quote}"
        event_id = stable_id("fx", key, rate.as_of.isoformat(), format(rate.rate, "f"))
        envelope = wrap(rate, producer="pricing", occurred_at=now, event_id=event_id)
        messages.append(Outgoing(FX_RATES, key, envelope))
    await publish_many(broker, settings, messages)
