"""What pricing's handlers receive: its repositories, the books, the inbox and the outbox.

Two implementations: ``adapters.postgres`` (one PostgreSQL transaction per unit, the Redis
read models written after it commits) and ``adapters.memory`` (the service tests' fake).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple, Protocol

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.offers import OfferStatus, OfferSubmitted
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.reliability import ReliabilityCounts
from gpux_platform.unit_of_work import UnitOfWork
from gpux_pricing.domain.candles import Candle, CandleKey, Interval, Rolled, Snapshot
from gpux_pricing.domain.fx import Rate, RateTable
from gpux_pricing.domain.market import BookKey
from gpux_pricing.domain.validation import Band, SellerView

if TYPE_CHECKING:
    from gpux_pricing.service.history import HistoryMarks
    from gpux_pricing.service.market import Books
    from gpux_pricing.service.reliability import ReliabilityChanges


class KnownOffer(NamedTuple):
    """An offer pricing validated: its latest body, revision and status."""

    offer: OfferSubmitted
    revision: int
    status: OfferStatus


class Decision(NamedTuple):
    """Pricing's decision on one revision of an offer; ``reason`` says why it was rejected."""

    revision: int
    status: OfferStatus
    reason: str | None = None


class SellerRepository(Protocol):
    """Whether each account may sell (from ``gateway.accounts``)."""

    async def upsert(self, account_id: str, status: AccountStatus, *, is_seller: bool) -> None:
        """Remember an account's latest status and roles."""
        ...

    async def get(self, account_id: str) -> SellerView | None:
        """What pricing knows of an account."""
        ...


class GpuRepository(Protocol):
    """The GPU models of the catalog."""

    async def upsert(self, gpu_id: str, name: str) -> None:
        """Remember a GPU model."""
        ...

    async def known(self, gpu_id: str) -> bool:
        """Whether the catalog has this GPU model."""
        ...


class RateRepository(Protocol):
    """The newest FX rate of each currency into the reference currency."""

    async def upsert(self, rate: Rate) -> None:
        """Keep a rate unless a newer one is held (``gpux_contracts.fx.supersedes``)."""
        ...

    async def table(self) -> RateTable:
        """Every known rate (read once per unit of work)."""
        ...


class OfferRepository(Protocol):
    """Every offer pricing validated, with its latest revision and what the book holds of it."""

    async def get(self, offer_id: str) -> KnownOffer | None:
        """One offer (locked until the unit ends, where the store locks)."""
        ...

    async def save(self, offer: OfferSubmitted, decision: Decision, now: datetime) -> None:
        """Record an offer's latest revision and pricing's decision on it."""
        ...

    async def set_book_state(
        self, offer_id: str, status: OfferStatus, remaining: int, now: datetime
    ) -> OfferSubmitted | None:
        """Record what the book says of an offer; returns its latest body, None if unknown."""
        ...

    async def on_book(self, gpu: str, tier: str) -> list[tuple[OfferSubmitted, int]]:
        """The offers sold in one book (``domain.market.tiers_of``) that the book holds, with
        their free GPUs (by id)."""
        ...

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that ever had an offer that was not rejected."""
        ...

    async def books_of_sellers(self, seller_ids: Sequence[str]) -> dict[str, list[BookKey]]:
        """The books each of these sellers has an open offer in (not rejected, withdrawn or
        expired: on a book now, or on its way there, or exhausted), in key order; a seller
        with none is absent (one query)."""
        ...


class ReliabilityRepository(Protocol):
    """Each seller's reliability counts (from ``billing.reliability``)."""

    async def keep(self, counts: Mapping[str, ReliabilityCounts]) -> set[str]:
        """Keep each seller's counts unless larger ones are held
        (``gpux_contracts.reliability.supersedes``), in one statement; returns the sellers
        whose held counts changed."""
        ...

    async def of(self, seller_ids: Sequence[str]) -> dict[str, ReliabilityCounts]:
        """The counts held of these sellers; a seller with none is absent (one query)."""
        ...


class BookVersionRepository(Protocol):
    """A counter per book, moved by every unit that changes it, in any pricing instance.

    A process that remembers a book at version v knows it is current while the store says v.
    """

    async def get(self, book: BookKey) -> int:
        """The book's version (0 before its first change)."""
        ...

    async def bump(self, books: Sequence[BookKey]) -> dict[BookKey, int]:
        """Move each book's version on by one (one statement; locked until the unit ends)."""
        ...


class RecentTrades(NamedTuple):
    """What a book's history shows of its trades: when it last traded, its 24 h VWAP."""

    latest_at: datetime | None
    vwap: Decimal | None


class TradeRepository(Protocol):
    """Every trade, once, with its price as traded and in the reference currency."""

    async def record(self, trades: Sequence[tuple[TradeExecuted, Decimal | None]]) -> set[str]:
        """Record trades (one statement); the ids of those not recorded before."""
        ...

    async def recent(
        self, books: Sequence[BookKey], window: timedelta
    ) -> dict[BookKey, RecentTrades]:
        """Each book's latest trade time and volume-weighted reference price of its trades
        since ``window`` before it (one query)."""
        ...

    async def books(self) -> list[BookKey]:
        """Every (gpu, tier) that traded."""
        ...


class CandleRepository(Protocol):
    """The OHLC candles of each book and interval, in the reference currency."""

    async def roll(self, rolls: Mapping[CandleKey, Rolled]) -> None:
        """Extend these candles by what trades added to them (``domain.candles.extend``, one
        statement)."""
        ...

    async def latest(
        self, books: Sequence[BookKey], limit: int
    ) -> dict[BookKey, dict[Interval, list[Candle]]]:
        """Each book's newest candles of every interval, oldest first (one query)."""
        ...


class ReadModels(Protocol):
    """What readers see without asking pricing (Redis): quotes, the price stream, history."""

    async def write_quotes(self, quotes: Sequence[BestAskChanged], *, stream: bool) -> None:
        """Keep these quotes readable; ``stream``: also append them to the live price stream."""
        ...

    async def write_histories(self, snapshots: Sequence[Snapshot]) -> None:
        """Keep these books' histories readable."""
        ...


class PricingUnitOfWork(UnitOfWork, Protocol):
    """The platform's unit of work (inbox, outbox, commit) with pricing's repositories.

    ``books`` and ``history`` collect the books a unit changed (``reliability_changes`` marks
    the books of the sellers whose counts it changed); just before it commits, the unit turns
    each into one ``best_ask.changed`` per quote that changed (outbox) and one history
    snapshot, written to the read models once it committed.
    """

    @property
    def sellers(self) -> SellerRepository:
        """Who may sell."""
        ...

    @property
    def gpus(self) -> GpuRepository:
        """The catalog's GPU models."""
        ...

    @property
    def rates(self) -> RateRepository:
        """The newest FX rates."""
        ...

    @property
    def offers(self) -> OfferRepository:
        """The offers pricing validated."""
        ...

    @property
    def reliability(self) -> ReliabilityRepository:
        """The sellers' reliability counts."""
        ...

    @property
    def book_versions(self) -> BookVersionRepository:
        """Each book's version in the store."""
        ...

    @property
    def trades(self) -> TradeRepository:
        """Every trade."""
        ...

    @property
    def candles(self) -> CandleRepository:
        """The OHLC candles."""
        ...

    @property
    def books(self) -> Books:
        """The books in memory: changed by handlers, flushed before commit."""
        ...

    @property
    def history(self) -> HistoryMarks:
        """The books whose history changed in this unit."""
        ...

    @property
    def reliability_changes(self) -> ReliabilityChanges:
        """The sellers' counts this unit received, kept and their books marked at commit."""
        ...

    def now(self) -> datetime:
        """The unit's time (the service's clock)."""
        ...

    def band_for(self, gpu: str) -> Band:
        """The sanity band of one GPU model."""
        ...
