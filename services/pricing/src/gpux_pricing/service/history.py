"""Market history: trades roll into OHLC candles and a 24 h volume-weighted price.

Each trade is recorded once (keyed by its trade id) with its price as traded and in the
reference currency; it then extends the 1 min, 1 h and 1 day candles of its book. Trades are
applied in arrival order: the open stays, high and low extend, and the close is the price of
the latest trade by ``executed_at``, so an older trade arriving late never overwrites it.

Set-based per unit of work: the handler prices its trade (the rates are read once per unit)
and stages it on the unit's ``history``; the unit's commit (``HistoryMarks.flush``, before
the outbox) records the unit's trades in one statement, folds the new ones into their
candles (``domain.candles.rolls``) and rolls those in one more. A trade recorded before (the
same trade under another event id, in this unit or an earlier one) rolls nothing. Each book
the unit changed then gets one snapshot (its latest candles and 24 h VWAP, in every
currency), read in two queries for all of them and written to the read models after the
commit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal

from gpux_contracts.events import Envelope
from gpux_contracts.money import REFERENCE_CURRENCY, quantize
from gpux_contracts.orders import TradeExecuted
from gpux_pricing.domain.candles import (
    HISTORY_LENGTH,
    VWAP_WINDOW,
    History,
    Snapshot,
    rolls,
    snapshot,
)
from gpux_pricing.domain.fx import FxError
from gpux_pricing.domain.market import BookKey
from gpux_pricing.service.unit_of_work import (
    CandleRepository,
    PricingUnitOfWork,
    RateRepository,
    TradeRepository,
)

log = logging.getLogger("gpux.pricing.history")


async def on_trade_executed(uow: PricingUnitOfWork, event: Envelope[TradeExecuted]) -> None:
    """Price a trade in the reference currency and stage it; the unit's commit records it,
    rolls it into its book's candles and reads the book's snapshot."""
    trade = event.payload
    rates = await uow.rates.table()
    price: Decimal | None
    try:
        price = quantize(
            rates.convert(
                trade.price_per_gpu_hour, trade.currency, REFERENCE_CURRENCY, trade.executed_at
            )
        )
    except FxError:
        price = None  # kept as traded; it joins no candle rather than a guessed price
    uow.history.stage(trade, price)


class HistoryMarks:
    """The trades one unit of work staged, the books they changed, and their snapshots."""

    def __init__(
        self, *, trades: TradeRepository, candles: CandleRepository, rates: RateRepository
    ) -> None:
        self._trades = trades
        self._candles = candles
        self._rates = rates
        self._staged: dict[str, tuple[TradeExecuted, Decimal | None]] = {}
        self._books: dict[BookKey, datetime] = {}

    def stage(self, trade: TradeExecuted, price: Decimal | None) -> None:
        """A trade to record at commit, with its reference price (None: no rate); the first
        of a trade id staged twice in a unit is the one recorded, as one by one."""
        self._staged.setdefault(trade.trade_id, (trade, price))

    def mark(self, gpu: str, tier: str, at: datetime) -> None:
        """A trade of this book at ``at`` changed its history."""
        key = (gpu, tier)
        self._books[key] = max(at, self._books.get(key, at))

    async def flush(self) -> None:
        """Record the staged trades, roll the new priced ones into their candles and mark
        their books: a statement each, whatever the number of trades."""
        staged, self._staged = list(self._staged.values()), {}
        if not staged:
            return
        new = await self._trades.record(staged)
        priced: list[tuple[TradeExecuted, Decimal]] = []
        for trade, price in staged:
            if trade.trade_id not in new:
                continue  # the same trade again (another event id): already in the candles
            if price is None:
                log.warning(
                    "trade without a rate into the reference currency",
                    extra={"trade_id": trade.trade_id, "currency": trade.currency.value},
                )
                continue
            priced.append((trade, price))
            self.mark(trade.gpu, trade.tier, trade.executed_at)
        if priced:
            await self._candles.roll(rolls(priced))

    async def snapshots(self) -> list[Snapshot]:
        """One snapshot per book marked (read before the commit, written after it)."""
        marked, self._books = self._books, {}
        return await self.snapshots_at(marked)

    async def snapshots_at(self, books: Mapping[BookKey, datetime]) -> list[Snapshot]:
        """Each book's latest candles per interval and 24 h VWAP, at the rates known at the
        time given for it (two queries for all the books)."""
        if not books:
            return []
        keys = list(books)
        candles = await self._candles.latest(keys, HISTORY_LENGTH)
        recent = await self._trades.recent(keys, VWAP_WINDOW)
        rates = await self._rates.table()
        return [
            snapshot(
                gpu,
                tier,
                History(candles[gpu, tier], recent[gpu, tier].latest_at, recent[gpu, tier].vwap),
                rates,
                books[gpu, tier],
            )
            for gpu, tier in keys
        ]

    async def snapshot(self, book: BookKey, now: datetime) -> Snapshot:
        """A book's latest candles per interval and 24 h VWAP, at the rates known at ``now``."""
        (one,) = await self.snapshots_at({book: now})
        return one
