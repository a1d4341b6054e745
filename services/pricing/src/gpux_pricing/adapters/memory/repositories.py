"""Pricing's repositories in memory, on one ``PricingState``: the same answers as PostgreSQL
(``tests/contract`` runs one suite against both)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.fx import supersedes
from gpux_contracts.money import Currency, quantize
from gpux_contracts.offers import OfferStatus, OfferSubmitted
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.reliability import supersedes as counts_supersede
from gpux_pricing.domain.candles import Candle, CandleKey, Interval, Rolled, extend
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.domain.market import BookKey, free_on_book, tiers_of
from gpux_pricing.domain.validation import SellerView
from gpux_pricing.service.unit_of_work import Decision, KnownOffer, RecentTrades


@dataclass(frozen=True, slots=True)
class OfferRow:
    """One row of the offers table."""

    offer: OfferSubmitted
    revision: int
    status: OfferStatus
    reason: str | None
    updated_at: datetime
    remaining: int = 0
    on_book: bool = False


@dataclass(frozen=True, slots=True)
class TradeRow:
    """One recorded trade: its book, GPUs, reference price (None without a rate) and time."""

    gpu: str
    tier: str
    gpus: int
    price: Decimal | None
    executed_at: datetime


@dataclass
class PricingState:
    """Everything pricing stores, as plain objects."""

    sellers: dict[str, SellerView] = field(default_factory=dict)
    gpus: dict[str, str] = field(default_factory=dict)
    rates: dict[Currency, Rate] = field(default_factory=dict)
    offers: dict[str, OfferRow] = field(default_factory=dict)
    reliability: dict[str, ReliabilityCounts] = field(default_factory=dict)
    book_versions: dict[BookKey, int] = field(default_factory=dict)
    trades: dict[str, TradeRow] = field(default_factory=dict)
    candles: dict[CandleKey, Rolled] = field(default_factory=dict)


class MemorySellers:
    """Sellers in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def upsert(self, account_id: str, status: AccountStatus, *, is_seller: bool) -> None:
        """Remember an account's latest status and roles."""
        self._state.sellers[account_id] = SellerView(status, is_seller)

    async def get(self, account_id: str) -> SellerView | None:
        """What pricing knows of an account."""
        return self._state.sellers.get(account_id)


class MemoryGpus:
    """GPU models in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def upsert(self, gpu_id: str, name: str) -> None:
        """Remember a GPU model."""
        self._state.gpus[gpu_id] = name

    async def known(self, gpu_id: str) -> bool:
        """Whether the catalog has this GPU model."""
        return gpu_id in self._state.gpus


class MemoryRates:
    """FX rates in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def upsert(self, rate: Rate) -> None:
        """Keep a rate unless a newer one is held."""
        current = self._state.rates.get(rate.base)
        if supersedes(rate.as_of, None if current is None else current.as_of):
            self._state.rates[rate.base] = rate

    async def table(self) -> RateTable:
        """Every known rate."""
        return RateTable.of(*self._state.rates.values())


class MemoryOffers:
    """Offers in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def get(self, offer_id: str) -> KnownOffer | None:
        """One offer."""
        row = self._state.offers.get(offer_id)
        return None if row is None else KnownOffer(row.offer, row.revision, row.status)

    async def save(self, offer: OfferSubmitted, decision: Decision, now: datetime) -> None:
        """Record an offer's latest revision and decision (what the book holds stays)."""
        revision, status, reason = decision
        row = self._state.offers.get(offer.offer_id)
        if row is None:
            self._state.offers[offer.offer_id] = OfferRow(offer, revision, status, reason, now)
        else:
            self._state.offers[offer.offer_id] = replace(
                row, offer=offer, revision=revision, status=status, reason=reason, updated_at=now
            )

    async def set_book_state(
        self, offer_id: str, status: OfferStatus, remaining: int, now: datetime
    ) -> OfferSubmitted | None:
        """Record what the book says of an offer; returns its latest body, None if unknown."""
        row = self._state.offers.get(offer_id)
        if row is None:
            return None
        on_book = free_on_book(status, remaining) > 0
        self._state.offers[offer_id] = replace(
            row, status=status, remaining=remaining, on_book=on_book, updated_at=now
        )
        return row.offer

    async def on_book(self, gpu: str, tier: str) -> list[tuple[OfferSubmitted, int]]:
        """The offers sold in one book that the book holds, by offer id."""
        return [
            (row.offer, row.remaining)
            for offer_id, row in sorted(self._state.offers.items())
            if row.on_book and row.offer.gpu == gpu and tier in tiers_of(row.offer)
        ]

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that ever had an offer sold in it that was not rejected."""
        return sorted(
            {
                (row.offer.gpu, tier)
                for row in self._state.offers.values()
                if row.status is not OfferStatus.REJECTED
                for tier in tiers_of(row.offer)
            }
        )

    async def books_of_sellers(self, seller_ids: Sequence[str]) -> dict[str, list[BookKey]]:
        """The books each of these sellers has an open offer in, in key order."""
        wanted = set(seller_ids)
        books: dict[str, set[BookKey]] = {}
        for row in self._state.offers.values():
            seller = row.offer.seller_id
            if seller in wanted and row.status not in CLOSED:
                books.setdefault(seller, set()).update(
                    (row.offer.gpu, tier) for tier in tiers_of(row.offer)
                )
        return {seller: sorted(keys) for seller, keys in sorted(books.items())}


CLOSED = {OfferStatus.REJECTED, OfferStatus.WITHDRAWN, OfferStatus.EXPIRED}
"""The statuses of offers that never come back to a book."""


class MemoryReliability:
    """Sellers' reliability counts in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def keep(self, counts: Mapping[str, ReliabilityCounts]) -> set[str]:
        """Keep each seller's counts unless larger ones are held; the sellers changed."""
        changed = set()
        for seller_id, candidate in counts.items():
            held = self._state.reliability.get(seller_id)
            if counts_supersede(candidate, held) and candidate != held:
                self._state.reliability[seller_id] = candidate
                changed.add(seller_id)
        return changed

    async def of(self, seller_ids: Sequence[str]) -> dict[str, ReliabilityCounts]:
        """The counts held of these sellers."""
        held = self._state.reliability
        return {s: held[s] for s in seller_ids if s in held}


class MemoryBookVersions:
    """Book versions in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def get(self, book: BookKey) -> int:
        """The book's version."""
        return self._state.book_versions.get(book, 0)

    async def bump(self, books: Sequence[BookKey]) -> dict[BookKey, int]:
        """Move each book's version on by one."""
        versions = self._state.book_versions
        for book in set(books):
            versions[book] = versions.get(book, 0) + 1
        return {book: versions[book] for book in books}


class MemoryTrades:
    """Trades in memory."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def record(self, trades: Sequence[tuple[TradeExecuted, Decimal | None]]) -> set[str]:
        """Record trades; the ids of those not recorded before."""
        new: set[str] = set()
        for trade, price in trades:
            if trade.trade_id in self._state.trades:
                continue
            self._state.trades[trade.trade_id] = TradeRow(
                trade.gpu, trade.tier, trade.gpus, price, trade.executed_at
            )
            new.add(trade.trade_id)
        return new

    def _of(self, gpu: str, tier: str) -> list[TradeRow]:
        return [t for t in self._state.trades.values() if (t.gpu, t.tier) == (gpu, tier)]

    async def recent(
        self, books: Sequence[BookKey], window: timedelta
    ) -> dict[BookKey, RecentTrades]:
        """Each book's latest trade time and VWAP over ``window`` up to it."""
        return {book: self._recent(self._of(*book), window) for book in books}

    @staticmethod
    def _recent(trades: list[TradeRow], window: timedelta) -> RecentTrades:
        if not trades:
            return RecentTrades(None, None)
        latest = max(t.executed_at for t in trades)
        priced = [
            (t.price, t.gpus)
            for t in trades
            if t.price is not None and latest - window <= t.executed_at <= latest
        ]
        gpus = sum(g for _, g in priced)
        if not gpus:
            return RecentTrades(latest, None)
        notional = sum((p * g for p, g in priced), Decimal(0))
        return RecentTrades(latest, quantize(notional / Decimal(gpus)))

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that traded."""
        return sorted({(t.gpu, t.tier) for t in self._state.trades.values()})


class MemoryCandles:
    """Candles in memory, rolled as the SQL upsert rolls them."""

    def __init__(self, state: PricingState) -> None:
        self._state = state

    async def roll(self, rolls: Mapping[CandleKey, Rolled]) -> None:
        """Extend these candles by what trades added to them."""
        candles = self._state.candles
        for key, more in rolls.items():
            candles[key] = extend(candles.get(key), more)

    async def latest(
        self, books: Sequence[BookKey], limit: int
    ) -> dict[BookKey, dict[Interval, list[Candle]]]:
        """Each book's newest candles of every interval, oldest first."""
        return {book: {i: self._latest(book, i, limit) for i in Interval} for book in books}

    def _latest(self, book: BookKey, interval: Interval, limit: int) -> list[Candle]:
        mine = sorted(
            (start, row.candle)
            for (g, t, i, start), row in self._state.candles.items()
            if (g, t, i) == (*book, interval)
        )
        return [candle for _, candle in mine[-limit:]] if limit > 0 else []
