"""Market history: trades roll into OHLC candles and a 24 h volume-weighted price.

Each trade is recorded once (keyed by its trade id) with its price as traded and in the
reference currency; it then extends the 1 min, 1 h and 1 day candles of its book, in the
unit of work of its batch. Trades are applied in arrival order: the open stays, high and low
extend, and the close is the price of the latest trade by ``executed_at``, so an older trade
arriving late never overwrites it. Each book a unit changed gets one snapshot (its latest
candles and 24 h VWAP, in every currency), written to the read models after the commit.
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal

from gpux_contracts.events import Envelope
from gpux_contracts.money import REFERENCE_CURRENCY, quantize
from gpux_contracts.orders import TradeExecuted
from gpux_pricing.domain.candles import (
    HISTORY_LENGTH,
    VWAP_WINDOW,
    History,
    Interval,
    Snapshot,
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
    """Record a trade and roll it into its book's candles; the book's snapshot follows."""
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
    if not await uow.trades.record(trade, price):
        return  # the same trade again (another event id): already in the candles
    if price is None:
        log.warning(
            "trade without a rate into the reference currency",
            extra={"trade_id": trade.trade_id, "currency": trade.currency.value},
        )
        return
    await uow.candles.roll(trade, price)
    uow.history.mark(trade.gpu, trade.tier, trade.executed_at)


class HistoryMarks:
    """The books whose history one unit of work changed, and their snapshots."""

    def __init__(
        self, *, trades: TradeRepository, candles: CandleRepository, rates: RateRepository
    ) -> None:
        self._trades = trades
        self._candles = candles
        self._rates = rates
        self._books: dict[BookKey, datetime] = {}

    def mark(self, gpu: str, tier: str, at: datetime) -> None:
        """A trade of this book at ``at`` changed its history."""
        key = (gpu, tier)
        self._books[key] = max(at, self._books.get(key, at))

    async def snapshots(self) -> list[Snapshot]:
        """One snapshot per book marked (read before the commit, written after it)."""
        marked, self._books = self._books, {}
        return [await self.snapshot(key, at) for key, at in marked.items()]

    async def snapshot(self, book: BookKey, now: datetime) -> Snapshot:
        """A book's latest candles per interval and 24 h VWAP, at the rates known at ``now``."""
        gpu, tier = book
        history = History(
            candles={i: await self._candles.latest(gpu, tier, i, HISTORY_LENGTH) for i in Interval},
            latest_trade_at=await self._trades.latest_at(gpu, tier),
            vwap_24h=await self._trades.vwap(gpu, tier, VWAP_WINDOW),
        )
        return snapshot(gpu, tier, history, await self._rates.table(), now)
