"""Market history on PostgreSQL: ``pricing.trades`` and ``pricing.candles``."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import asyncpg

from gpux_contracts.money import quantize
from gpux_contracts.orders import TradeExecuted
from gpux_pricing.domain.candles import Candle, Interval, bucket_start
from gpux_pricing.domain.market import BookKey

# One statement extends the trade's candle of every interval. The close follows the latest
# trade by execution time (close_at), so an older trade arriving late never replaces it.
_ROLL = (
    "INSERT INTO pricing.candles (gpu, tier, interval, start, open, high, low, close,"
    " close_at, gpus, notional)"
    " SELECT $1::text, $2::text, c.interval, c.start, $3::numeric, $3::numeric, $3::numeric,"
    " $3::numeric, $4::timestamptz, $5::bigint, $3::numeric * $5::bigint"
    " FROM unnest($6::text[], $7::timestamptz[]) AS c(interval, start)"
    " ON CONFLICT (gpu, tier, interval, start) DO UPDATE SET"
    " high = GREATEST(candles.high, EXCLUDED.high),"
    " low = LEAST(candles.low, EXCLUDED.low),"
    " close = CASE WHEN EXCLUDED.close_at >= candles.close_at"
    " THEN EXCLUDED.close ELSE candles.close END,"
    " close_at = GREATEST(candles.close_at, EXCLUDED.close_at),"
    " gpus = candles.gpus + EXCLUDED.gpus,"
    " notional = candles.notional + EXCLUDED.notional"
)


class PostgresTrades:
    """``pricing.trades``: every trade once, as traded and in the reference currency."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def record(self, trade: TradeExecuted, price: Decimal | None) -> bool:
        """Record a trade; False when its trade id was recorded before."""
        recorded = await self._conn.fetchval(
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
        return bool(recorded)

    async def latest_at(self, gpu: str, tier: str) -> datetime | None:
        """When the book last traded."""
        latest: datetime | None = await self._conn.fetchval(
            "SELECT max(executed_at) FROM pricing.trades WHERE gpu = $1 AND tier = $2", gpu, tier
        )
        return latest

    async def vwap(self, gpu: str, tier: str, window: timedelta) -> Decimal | None:
        """Volume-weighted reference price of the book over ``window`` up to its latest trade."""
        row = await self._conn.fetchrow(
            "WITH latest AS (SELECT max(executed_at) AS at FROM pricing.trades"
            " WHERE gpu = $1 AND tier = $2)"
            " SELECT sum(t.price * t.gpus) AS notional, sum(t.gpus) AS gpus"
            " FROM pricing.trades t, latest"
            " WHERE t.gpu = $1 AND t.tier = $2 AND t.price IS NOT NULL"
            " AND t.executed_at >= latest.at - $3::interval AND t.executed_at <= latest.at",
            gpu,
            tier,
            window,
        )
        if row is None or not row["gpus"]:
            return None
        return quantize(Decimal(row["notional"]) / Decimal(row["gpus"]))

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that traded."""
        rows = await self._conn.fetch(
            "SELECT DISTINCT gpu, tier FROM pricing.trades ORDER BY gpu, tier"
        )
        return [(r["gpu"], r["tier"]) for r in rows]


class PostgresCandles:
    """``pricing.candles``: OHLC per book, interval and start, in the reference currency."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def roll(self, trade: TradeExecuted, price: Decimal) -> None:
        """Extend the trade's candles of every interval."""
        await self._conn.execute(
            _ROLL,
            trade.gpu,
            trade.tier,
            price,
            trade.executed_at,
            trade.gpus,
            [i.value for i in Interval],
            [bucket_start(trade.executed_at, i) for i in Interval],
        )

    async def latest(self, gpu: str, tier: str, interval: Interval, limit: int) -> list[Candle]:
        """The book's newest candles of one interval, oldest first."""
        rows = await self._conn.fetch(
            "SELECT start, open, high, low, close, gpus, notional FROM pricing.candles"
            " WHERE gpu = $1 AND tier = $2 AND interval = $3 ORDER BY start DESC LIMIT $4",
            gpu,
            tier,
            interval.value,
            limit,
        )
        return [
            Candle(r["start"], r["open"], r["high"], r["low"], r["close"], r["gpus"], r["notional"])
            for r in reversed(rows)
        ]
