"""Market history: trades roll into OHLC candles and a 24 h volume-weighted price.

Each trade is recorded once (``pricing.trades``, keyed by its trade id) with its price as
traded and in EUR, the reference currency; it then extends the 1 min, 1 h and 1 day candles
of its book in ``pricing.candles``, in the consume transaction. Trades are applied in
arrival order, like ``domain.candles.roll``: the open stays, high and low extend, and the
close is the price of the latest trade by ``executed_at`` (``close_at``), so an older trade
arriving late never overwrites it. After commit, the latest candles of the book and its
24 h volume-weighted price go to Redis, converted into every currency, for the gateway.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
from redis.asyncio import Redis

from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency, canonical, quantize
from gpux_contracts.orders import TradeExecuted
from gpux_platform.redis_keys import CANDLES
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters import repository
from gpux_pricing.domain.candles import Interval, bucket_start
from gpux_pricing.domain.fx import REFERENCE, FxError, RateTable

HISTORY_LENGTH = 200
"""Candles per book and interval kept in Redis for reads."""
VWAP_WINDOW = timedelta(hours=24)

log = logging.getLogger("gpux.pricing.history")

_UPSERT_CANDLE = (
    "INSERT INTO pricing.candles (gpu, tier, interval, start, open, high, low, close,"
    " close_at, gpus, notional)"
    " VALUES ($1, $2, $3, $4, $5, $5, $5, $5, $6, $7, $5::numeric * $7::bigint)"
    " ON CONFLICT (gpu, tier, interval, start) DO UPDATE SET"
    " high = GREATEST(candles.high, EXCLUDED.high),"
    " low = LEAST(candles.low, EXCLUDED.low),"
    " close = CASE WHEN EXCLUDED.close_at >= candles.close_at"
    " THEN EXCLUDED.close ELSE candles.close END,"
    " close_at = GREATEST(candles.close_at, EXCLUDED.close_at),"
    " gpus = candles.gpus + EXCLUDED.gpus,"
    " notional = candles.notional + EXCLUDED.notional"
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What goes to Redis after commit: one JSON body per interval of one book."""

    gpu: str
    tier: str
    bodies: dict[Interval, str]


async def on_trade_executed(
    conn: asyncpg.Connection, event: Envelope[TradeExecuted]
) -> Snapshot | None:
    """Record a trade and roll it into its book's candles; returns the book's new history."""
    trade = event.payload
    rates = await repository.rate_table(conn)
    price: Decimal | None
    try:
        price = quantize(
            rates.convert(trade.price_per_gpu_hour, trade.currency, REFERENCE, trade.executed_at)
        )
    except FxError:
        price = None  # kept as traded; it joins no candle rather than a guessed price
    recorded = await conn.fetchval(
        "INSERT INTO pricing.trades (trade_id, gpu, tier, gpus, price, traded_price,"
        " traded_currency, executed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        " ON CONFLICT (trade_id) DO NOTHING RETURNING true",
        trade.trade_id,
        trade.gpu,
        trade.tier,
        trade.gpus,
        price,
        trade.price_per_gpu_hour,
        trade.currency.value,
        trade.executed_at,
    )
    if not recorded:
        return None  # the same trade again (another event id): already in the candles
    if price is None:
        log.warning(
            "trade without a rate into the reference currency",
            extra={"trade_id": trade.trade_id, "currency": trade.currency.value},
        )
        return None
    for interval in Interval:
        await conn.execute(
            _UPSERT_CANDLE,
            trade.gpu,
            trade.tier,
            interval.value,
            bucket_start(trade.executed_at, interval),
            price,
            trade.executed_at,
            trade.gpus,
        )
    return await snapshot(conn, trade.gpu, trade.tier, rates, trade.executed_at)


async def vwap_24h(conn: asyncpg.Connection | asyncpg.Pool, gpu: str, tier: str) -> Decimal | None:
    """EUR volume-weighted price of a book over the 24 h up to its latest trade."""
    row = await conn.fetchrow(
        "WITH latest AS (SELECT max(executed_at) AS at FROM pricing.trades"
        " WHERE gpu = $1 AND tier = $2)"
        " SELECT sum(t.price * t.gpus) AS notional, sum(t.gpus) AS gpus"
        " FROM pricing.trades t, latest"
        " WHERE t.gpu = $1 AND t.tier = $2 AND t.price IS NOT NULL"
        " AND t.executed_at >= latest.at - $3::interval AND t.executed_at <= latest.at",
        gpu,
        tier,
        VWAP_WINDOW,
    )
    if row is None or not row["gpus"]:
        return None
    return quantize(Decimal(row["notional"]) / Decimal(row["gpus"]))


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _every_currency(amount: Decimal, rates: RateTable, now: datetime) -> dict[str, str]:
    prices: dict[str, str] = {}
    for target in Currency:
        try:
            converted = quantize(rates.convert(amount, REFERENCE, target, now))
        except FxError:
            continue  # no rate for that currency: left out rather than guessed
        prices[target.value] = format(canonical(converted), "f")
    return prices


async def snapshot(
    conn: asyncpg.Connection | asyncpg.Pool,
    gpu: str,
    tier: str,
    rates: RateTable,
    now: datetime,
) -> Snapshot:
    """The latest candles of a book per interval and its 24 h VWAP, in every currency.

    EUR figures are converted with the rates known at ``now`` (the newest of each currency).
    """
    latest = await conn.fetchval(
        "SELECT max(executed_at) FROM pricing.trades WHERE gpu = $1 AND tier = $2", gpu, tier
    )
    vwap = await vwap_24h(conn, gpu, tier)
    bodies: dict[Interval, str] = {}
    for interval in Interval:
        rows = await conn.fetch(
            "SELECT start, open, high, low, close, gpus FROM pricing.candles"
            " WHERE gpu = $1 AND tier = $2 AND interval = $3 ORDER BY start DESC LIMIT $4",
            gpu,
            tier,
            interval.value,
            HISTORY_LENGTH,
        )
        candles: list[dict[str, Any]] = []
        for r in reversed(rows):
            prices: dict[str, dict[str, str]] = {}
            for field in ("open", "high", "low", "close"):
                for currency, value in _every_currency(r[field], rates, now).items():
                    prices.setdefault(currency, {})[field] = value
            candles.append({"start": _iso(r["start"]), "gpus": r["gpus"], "prices": prices})
        body = {
            "gpu": gpu,
            "tier": tier,
            "interval": interval.value,
            "as_of": _iso(latest) if latest else None,
            "vwap_24h": None if vwap is None else _every_currency(vwap, rates, now),
            "candles": candles,
        }
        bodies[interval] = json.dumps(body, separators=(",", ":"))
    return Snapshot(gpu, tier, bodies)


async def to_redis(redis: Redis, settings: GpuxSettings, history: Snapshot | None) -> None:
    """Keep a book's latest candles and 24 h VWAP readable (after commit)."""
    if history is None:
        return
    pipe = redis.pipeline(transaction=False)
    for interval, body in history.bodies.items():
        pipe.set(settings.redis_key(CANDLES, history.gpu, history.tier, interval.value), body)
    await pipe.execute()
