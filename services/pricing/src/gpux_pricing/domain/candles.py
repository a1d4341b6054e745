"""OHLC candles and volume-weighted prices from trades (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum


class Interval(StrEnum):
    """Candle widths."""

    MINUTE = "1m"
    """One minute."""
    HOUR = "1h"
    """One hour."""
    DAY = "1d"
    """One day (UTC)."""

    @property
    def width(self) -> timedelta:
        """The interval's length."""
        return {"1m": timedelta(minutes=1), "1h": timedelta(hours=1), "1d": timedelta(days=1)}[
            self.value
        ]


def bucket_start(at: datetime, interval: Interval) -> datetime:
    """The start of the candle that contains ``at`` (UTC)."""
    seconds = int(interval.width.total_seconds())
    epoch = int(at.astimezone(UTC).timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, UTC)


@dataclass(frozen=True, slots=True)
class Candle:
    """Open, high, low, close and volume of trades in one interval (reference currency)."""

    start: datetime
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    gpus: int
    notional: Decimal

    @property
    def vwap(self) -> Decimal:
        """The volume-weighted average price."""
        return self.notional / self.gpus


def roll(candle: Candle | None, start: datetime, price: Decimal, gpus: int) -> Candle:
    """The candle after one more trade (trades arrive in time order within a bucket)."""
    if gpus <= 0:
        raise ValueError("a trade has at least one GPU")
    if candle is None or candle.start != start:
        return Candle(start, price, price, price, price, gpus, price * gpus)
    return Candle(
        start,
        candle.open,
        max(candle.high, price),
        min(candle.low, price),
        price,
        candle.gpus + gpus,
        candle.notional + price * gpus,
    )
