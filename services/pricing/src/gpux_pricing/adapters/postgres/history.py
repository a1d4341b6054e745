"""Market history on PostgreSQL: ``pricing.trades`` and ``pricing.candles``.

Each method is one statement for any number of trades or books (arrays through ``unnest``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from decimal import Decimal

import asyncpg

from gpux_contracts.money import quantize
from gpux_contracts.orders import TradeExecuted
from gpux_pricing.domain.candles import Candle, CandleKey, Interval, Rolled
from gpux_pricing.domain.market import BookKey
from gpux_pricing.service.unit_of_work import RecentTrades

_RECORD = (
    "INSERT INTO pricing.trades (trade_id, gpu, tier, gpus, price, traded_price,"
    " traded_currency, executed_at)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::numeric[],"
    " $6::numeric[], $7::text[], $8::timestamptz[])"
    " AS t(trade_id, gpu, tier, gpus, price, traded_price, traded_currency, executed_at)"
    " ORDER BY trade_id"
    " ON CONFLICT (trade_id) DO NOTHING RETURNING trade_id"
)

# What the trades added to each candle (folded by domain.candles.rolls, one row per candle)
# extends it as domain.candles.extend does: the close follows the latest trade by execution
# time (close_at), so an older trade arriving late never replaces it. In key order, so two
# instances rolling the same candles never lock them crosswise.
_ROLL = (
    "INSERT INTO pricing.candles (gpu, tier, interval, start, open, high, low, close,"
    " close_at, gpus, notional)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[],"
    " $5::numeric[], $6::numeric[], $7::numeric[], $8::numeric[], $9::timestamptz[],"
    " $10::bigint[], $11::numeric[])"
    " AS c(gpu, tier, interval, start, open, high, low, close, close_at, gpus, notional)"
    " ORDER BY gpu, tier, interval, start"
    " ON CONFLICT (gpu, tier, interval, start) DO UPDATE SET"
    " high = GREATEST(candles.high, EXCLUDED.high),"
    " low = LEAST(candles.low, EXCLUDED.low),"
    " close = CASE WHEN EXCLUDED.close_at >= candles.close_at"
    " THEN EXCLUDED.close ELSE candles.close END,"
    " close_at = GREATEST(candles.close_at, EXCLUDED.close_at),"
    " gpus = candles.gpus + EXCLUDED.gpus,"
    " notional = candles.notional + EXCLUDED.notional"
)

_RECENT = (
    "SELECT b.gpu, b.tier, l.at, v.notional, v.gpus"
    " FROM unnest($1::text[], $2::text[]) AS b(gpu, tier)"
    " CROSS JOIN LATERAL (SELECT max(executed_at) AS at FROM pricing.trades t"
    " WHERE t.gpu = b.gpu AND t.tier = b.tier) l"
    " CROSS JOIN LATERAL (SELECT sum(t.price * t.gpus) AS notional, sum(t.gpus) AS gpus"
    " FROM pricing.trades t WHERE t.gpu = b.gpu AND t.tier = b.tier AND t.price IS NOT NULL"
    " AND t.executed_at >= l.at - $3::interval AND t.executed_at <= l.at) v"
)

# The newest candles of each book and interval, each read backwards on the primary key.
_LATEST = (
    "SELECT b.gpu, b.tier, i.interval, c.start, c.open, c.high, c.low, c.close, c.gpus,"
    " c.notional FROM unnest($1::text[], $2::text[]) AS b(gpu, tier)"
    " CROSS JOIN unnest($3::text[]) AS i(interval)"
    " CROSS JOIN LATERAL (SELECT start, open, high, low, close, gpus, notional"
    " FROM pricing.candles WHERE gpu = b.gpu AND tier = b.tier AND interval = i.interval"
    " ORDER BY start DESC LIMIT $4) c"
    " ORDER BY b.gpu, b.tier, i.interval, c.start"
)


class PostgresTrades:
    """``pricing.trades``: every trade once, as traded and in the reference currency."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def record(self, trades: Sequence[tuple[TradeExecuted, Decimal | None]]) -> set[str]:
        """Record trades in one statement; the ids of those not recorded before."""
        if not trades:
            return set()
        rows = await self._conn.fetch(
            _RECORD,
            [t.trade_id for t, _ in trades],
            [t.gpu for t, _ in trades],
            [t.tier for t, _ in trades],
            [t.gpus for t, _ in trades],
            [price for _, price in trades],
            [t.price_per_gpu_hour for t, _ in trades],
            [t.currency.value for t, _ in trades],
            [t.executed_at for t, _ in trades],
        )
        return {r["trade_id"] for r in rows}

    async def recent(
        self, books: Sequence[BookKey], window: timedelta
    ) -> dict[BookKey, RecentTrades]:
        """Each book's latest trade time and VWAP over ``window`` up to it, in one query."""
        rows = await self._conn.fetch(_RECENT, [g for g, _ in books], [t for _, t in books], window)
        recent = {book: RecentTrades(None, None) for book in books}
        for r in rows:
            vwap = quantize(Decimal(r["notional"]) / Decimal(r["gpus"])) if r["gpus"] else None
            recent[r["gpu"], r["tier"]] = RecentTrades(r["at"], vwap)
        return recent

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

    async def roll(self, rolls: Mapping[CandleKey, Rolled]) -> None:
        """Extend these candles by what trades added to them, in one statement."""
        if not rolls:
            return
        keys, rolled = list(rolls), list(rolls.values())
        candles = [r.candle for r in rolled]
        await self._conn.execute(
            _ROLL,
            [k[0] for k in keys],
            [k[1] for k in keys],
            [k[2].value for k in keys],
            [k[3] for k in keys],
            [c.open for c in candles],
            [c.high for c in candles],
            [c.low for c in candles],
            [c.close for c in candles],
            [r.close_at for r in rolled],
            [c.gpus for c in candles],
            [c.notional for c in candles],
        )

    async def latest(
        self, books: Sequence[BookKey], limit: int
    ) -> dict[BookKey, dict[Interval, list[Candle]]]:
        """Each book's newest candles of every interval, oldest first, in one query."""
        latest = {book: {i: list[Candle]() for i in Interval} for book in books}
        if not books or limit <= 0:
            return latest
        rows = await self._conn.fetch(
            _LATEST,
            [g for g, _ in books],
            [t for _, t in books],
            [i.value for i in Interval],
            limit,
        )
        for r in rows:
            latest[r["gpu"], r["tier"]][Interval(r["interval"])].append(
                Candle(
                    r["start"], r["open"], r["high"], r["low"], r["close"], r["gpus"], r["notional"]
                )
            )
        return latest
