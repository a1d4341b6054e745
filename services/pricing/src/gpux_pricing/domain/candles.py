"""OHLC candles and volume-weighted prices from trades, and the history readers get (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from gpux_contracts.money import REFERENCE_CURRENCY, canonical, quantize
from gpux_contracts.orders import TradeExecuted
from gpux_pricing.domain.fx import RateTable

HISTORY_LENGTH = 200
"""Candles per book and interval kept for readers."""
VWAP_WINDOW = timedelta(hours=24)
"""The volume-weighted price covers the trades of this long up to a book's latest."""


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


CandleKey = tuple[str, str, Interval, datetime]
"""gpu, tier, interval, start"""


@dataclass(frozen=True, slots=True)
class Rolled:
    """A candle with the execution time of the trade that set its close."""

    candle: Candle
    close_at: datetime


def extend(held: Rolled | None, more: Rolled) -> Rolled:
    """``held`` extended by ``more``, what trades that arrived after it add to the same candle.

    The open stays, high and low extend, the close follows the latest trade by execution
    time (on a tie, the one that arrived last), so an older trade arriving late never moves
    it; volumes add. Trade by trade or a batch folded first, the candle comes out the same.
    """
    if held is None:
        return more
    old, new = held.candle, more.candle
    candle = Candle(
        old.start,
        old.open,
        max(old.high, new.high),
        min(old.low, new.low),
        new.close if more.close_at >= held.close_at else old.close,
        old.gpus + new.gpus,
        old.notional + new.notional,
    )
    return Rolled(candle, max(held.close_at, more.close_at))


def rolls(trades: Iterable[tuple[TradeExecuted, Decimal]]) -> dict[CandleKey, Rolled]:
    """What trades, in arrival order with their reference prices, add to each candle they
    fall in (every interval of their book)."""
    added: dict[CandleKey, Rolled] = {}
    for trade, price in trades:
        if trade.gpus <= 0:
            raise ValueError("a trade has at least one GPU")
        at, gpus = trade.executed_at, trade.gpus
        for interval in Interval:
            start = bucket_start(at, interval)
            key = (trade.gpu, trade.tier, interval, start)
            one = Rolled(Candle(start, price, price, price, price, gpus, price * gpus), at)
            added[key] = extend(added.get(key), one)
    return added


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A book's history as readers get it: one JSON body per interval."""

    gpu: str
    tier: str
    bodies: dict[Interval, str]


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _every_currency(amount: Decimal, rates: RateTable, now: datetime) -> dict[str, str]:
    converted = rates.in_every_currency(amount, REFERENCE_CURRENCY, now)
    return {c.value: format(canonical(quantize(p)), "f") for c, p in converted.items()}


@dataclass(frozen=True, slots=True)
class History:
    """What a book's history shows: its latest candles per interval, newest trade, 24 h VWAP."""

    candles: dict[Interval, list[Candle]]
    """Oldest first, in the reference currency."""
    latest_trade_at: datetime | None
    vwap_24h: Decimal | None


def snapshot(gpu: str, tier: str, history: History, rates: RateTable, now: datetime) -> Snapshot:
    """The read model of one book: its candles and 24 h VWAP, in every currency.

    Figures in the reference currency are converted with the rates known at ``now``.
    """
    bodies: dict[Interval, str] = {}
    vwap = history.vwap_24h
    for interval, candles in history.candles.items():
        rendered: list[dict[str, Any]] = []
        for candle in candles:
            prices: dict[str, dict[str, str]] = {}
            for field in ("open", "high", "low", "close"):
                for currency, value in _every_currency(getattr(candle, field), rates, now).items():
                    prices.setdefault(currency, {})[field] = value
            rendered.append({"start": _iso(candle.start), "gpus": candle.gpus, "prices": prices})
        body = {
            "gpu": gpu,
            "tier": tier,
            "interval": interval.value,
            "as_of": _iso(history.latest_trade_at) if history.latest_trade_at else None,
            "vwap_24h": None if vwap is None else _every_currency(vwap, rates, now),
            "candles": rendered,
        }
        bodies[interval] = json.dumps(body, separators=(",", ":"))
    return Snapshot(gpu, tier, bodies)
