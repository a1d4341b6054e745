"""The book as matching reports it, and the quotes (best ask, depth) pricing publishes from it.

Each report of an offer (live with its free GPUs, exhausted, withdrawn, expired) places the
offer in every book of a tier it is sold in (``domain.market.legs_of``: on demand at its
price, interruptible at its interruptible price), each leg with the free GPUs the book
reported, or takes it off them all; an exhausted offer the book reports live again is back.

Each process keeps every book it has seen in memory (``BookCache``), levels in order, so an
offer's change costs O(levels), never a recomputation of its book. A handler changes the
book and marks it; just before its unit of work commits, ``Books.flush`` turns each marked
book into at most one ``best_ask.changed`` per quote (all regions, then each region), and
only for a quote that differs from the one last sent: the compacted topic and the price
stream carry states, not every step on the way. Each quote shows its sellers' reliability
(``domain.quotes``), the counts of every seller of the flushed books read in one query.

Several pricing instances may hold the same book (a rebalance moves ``offers.status``
partitions between them). Every unit that changes a book moves its version in the store, in
its transaction; a process that finds the version moved by more than its own change loads
the book again (inside the same transaction, so with this unit's changes) and sends all of
its quotes, not knowing what the other instance sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from gpux_contracts.events import Envelope
from gpux_contracts.offers import OfferStatusChanged
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import PRICING_BEST_ASKS
from gpux_platform.broker import Outgoing
from gpux_pricing.domain.fx import RateTable
from gpux_pricing.domain.market import (
    DEPTH_LEVELS,
    BookKey,
    Market,
    Quote,
    free_on_book,
    live_leg,
    live_legs,
    tiers_of,
)
from gpux_pricing.domain.quotes import SellerCounts, best_ask_payload, same_state, sellers_of
from gpux_pricing.service.outgoing import PRODUCER, message
from gpux_pricing.service.unit_of_work import (
    BookVersionRepository,
    OfferRepository,
    PricingUnitOfWork,
    RateRepository,
    ReliabilityRepository,
)


async def on_book_status(uow: PricingUnitOfWork, event: Envelope[OfferStatusChanged]) -> None:
    """Mirror what the book says of an offer in each of its books; their quotes follow at
    commit."""
    if event.producer == PRODUCER:
        return  # pricing's own decisions on the same topic
    change = event.payload
    now = uow.now()
    offer = await uow.offers.set_book_state(
        change.offer_id, change.status, change.remaining_gpus, now
    )
    if offer is None:
        return
    books = {(offer.gpu, tier) for tier in tiers_of(offer)}
    market = await uow.books.markets(books)
    free = free_on_book(change.status, change.remaining_gpus)
    legs = live_legs(offer, free, await uow.rates.table(), now) if free else []
    books |= market.place(offer.offer_id, legs)
    for gpu, tier in sorted(books):
        uow.books.mark(gpu, tier, event)


class BookCache:
    """The books of this process, shared by its units of work one at a time (``lock``)."""

    def __init__(self, depth_levels: int = DEPTH_LEVELS) -> None:
        self.market = Market(depth_levels)
        self.versions: dict[BookKey, int] = {}
        """The store's version each book in ``market`` is as of."""
        self.published: dict[BookKey, dict[str, BestAskChanged]] = {}
        """The last quote sent per book and region."""
        self.ranked_with: RateTable | None = None
        """The rates the offers in ``market`` are ranked at."""
        self.lock = asyncio.Lock()

    def forget(self, books: set[BookKey]) -> None:
        """Drop books (loaded again from the store when next used)."""
        for gpu, tier in books:
            self.market.drop(gpu, tier)
            self.versions.pop((gpu, tier), None)


class Books:
    """One unit of work's use of the book cache: load, mark, flush before commit."""

    def __init__(
        self,
        cache: BookCache,
        *,
        offers: OfferRepository,
        versions: BookVersionRepository,
        rates: RateRepository,
        reliability: ReliabilityRepository,
        now: Callable[[], datetime],
    ) -> None:
        self._cache = cache
        self._offers = offers
        self._versions = versions
        self._rates = rates
        self._reliability = reliability
        self._now = now
        self._held = False
        self._touched: set[BookKey] = set()
        self._dirty: dict[BookKey, Envelope[Any]] = {}
        self._bumped: dict[BookKey, int] = {}
        self._sent: list[tuple[BookKey, BestAskChanged]] = []

    async def market(self, gpu: str, tier: str) -> Market:
        """The market with this book current (loaded from the store the first time)."""
        await self._hold()
        key = (gpu, tier)
        self._touched.add(key)
        if key not in self._cache.versions:
            await self._load(key)
        return self._cache.market

    async def markets(self, books: Iterable[BookKey]) -> Market:
        """The market with each of these books current (``market``)."""
        await self._hold()
        for gpu, tier in sorted(books):
            await self.market(gpu, tier)
        return self._cache.market

    def mark(self, gpu: str, tier: str, cause: Envelope[Any]) -> None:
        """This book changed (last because of ``cause``): send its changed quotes at commit."""
        self._dirty[(gpu, tier)] = cause

    async def flush(self) -> list[Outgoing]:
        """The ``best_ask.changed`` events of the marked books' changed quotes (before commit)."""
        if not self._dirty:
            return []
        await self._hold()
        now = self._now()
        rates = await self._rates.table()
        self._bumped = await self._versions.bump(list(self._dirty))
        quoted: list[tuple[BookKey, Mapping[str, BestAskChanged], list[Quote]]] = []
        for key in self._dirty:
            previous = self._cache.published.get(key, {})
            known: Mapping[str, BestAskChanged] = previous
            if self._cache.versions.get(key) != self._bumped[key] - 1:
                await self._load(key)  # changed by another instance meanwhile
                known = {}  # what it sent is not known here: send every quote
            quoted.append((key, known, self._quotes(key, previous)))
        # Read after the bump: a unit that changed these sellers' counts and holds one of
        # these books has committed by now (service.reliability).
        counts = await self._counts(q for _, _, quotes in quoted for q in quotes)
        messages: list[Outgoing] = []
        for key, known, quotes in quoted:
            cause = self._dirty[key]
            for quote in quotes:
                payload = best_ask_payload(quote, rates, counts, now)
                if not same_state(payload, known.get(quote.region)):
                    self._sent.append((key, payload))
                    messages.append(
                        message(
                            PRICING_BEST_ASKS, quote.key, payload, cause, tag=quote.key, now=now
                        )
                    )
        return messages

    async def current(self, books: list[BookKey]) -> list[BestAskChanged]:
        """Every quote of these books as they stand, for a rebuild of the read models.

        They are taken as the quotes last sent: each committed change sent its book's quotes
        in the same transaction, so the store's state is what the topic holds.
        """
        await self._hold()
        now = self._now()
        rates = await self._rates.table()
        quoted: list[tuple[BookKey, list[Quote]]] = []
        for key in books:
            await self.market(*key)
            quoted.append((key, self._quotes(key, self._cache.published.get(key, {}))))
        counts = await self._counts(q for _, quotes in quoted for q in quotes)
        payloads = []
        for key, quotes in quoted:
            sent = self._cache.published.setdefault(key, {})
            for quote in quotes:
                payload = best_ask_payload(quote, rates, counts, now)
                sent[quote.region] = payload
                payloads.append(payload)
        return payloads

    def committed(self) -> list[BestAskChanged]:
        """The unit committed: remember what it sent; returns those quotes."""
        self._cache.versions.update(self._bumped)
        for key, payload in self._sent:
            self._cache.published.setdefault(key, {})[payload.region] = payload
        sent = [payload for _, payload in self._sent]
        self._reset()
        return sent

    def rolled_back(self) -> None:
        """The unit rolled back: forget the books it changed in memory."""
        self._cache.forget(self._touched | set(self._dirty))
        self._reset()
        self.release()

    def release(self) -> None:
        """Let the next unit use the books."""
        if self._held:
            self._held = False
            self._cache.lock.release()

    def _reset(self) -> None:
        self._touched, self._dirty, self._bumped, self._sent = set(), {}, {}, []

    async def _hold(self) -> None:
        if self._held:
            return
        await self._cache.lock.acquire()
        self._held = True
        rates = await self._rates.table()
        if self._cache.ranked_with != rates:
            # New rates re-rank offers in other currencies: every book is loaded again.
            self._cache.market.clear()
            self._cache.versions.clear()
            self._cache.ranked_with = rates

    async def _load(self, key: BookKey) -> None:
        rates = await self._rates.table()
        now = self._now()
        tier = key[1]
        held = await self._offers.on_book(*key)
        ranked = [live_leg(o, tier, left, rates, now) for o, left in held]
        self._cache.market.load(*key, [o for o in ranked if o is not None])
        self._cache.versions[key] = await self._versions.get(key)

    async def _counts(self, quotes: Iterable[Quote]) -> SellerCounts:
        """The counts of every seller these quotes show (one query)."""
        sellers: set[str] = set()
        for quote in quotes:
            sellers |= sellers_of(quote)
        return await self._reliability.of(sorted(sellers)) if sellers else {}

    def _quotes(self, key: BookKey, previous: Mapping[str, BestAskChanged]) -> list[Quote]:
        # A region quoted before but unknown to the book as loaded still gets its (empty) quote.
        book = self._cache.market.book(*key)
        quotes = book.quotes()
        regions = {q.region for q in quotes}
        return quotes + [book.quote(r) for r in sorted(set(previous) - regions)]
