"""Sellers' reliability (``billing.reliability``): each seller's counts, shown in its quotes.

Billing publishes an offer's and its seller's counts after each lease outcome it counts
(docs/DELIVERY.md, "Seller reliability"). Pricing keeps, per seller, the counts with the
largest total (``gpux_contracts.reliability.supersedes``: a replay, or a seller's events on
other partitions arriving late, never steps a seller back); every quote shows the counts of
the sellers it holds (``domain.quotes``), read when its book is flushed.

Set-based per unit of work, like the history: the handler stages the seller's counts on the
unit's ``reliability_changes``; the unit's commit (``ReliabilityChanges.flush``, before the
books' flush) keeps the unit's counts in one statement, finds the books of the sellers whose
counts changed in one query, and marks them, so that the books' flush republishes their
quotes that changed (``best_ask.changed``).

The books marked are those of the sellers' open offers, not only of those on a book now: an
offer that another unit puts on a book at this moment is already open, so its book is marked
here too, and the two units meet on the book's version (``Books.flush`` bumps it, then reads
the counts): whichever commits second sees the other's counts or offer and quotes both.
"""

from __future__ import annotations

from typing import Any

from gpux_contracts.events import Envelope
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts, supersedes
from gpux_pricing.service.market import Books
from gpux_pricing.service.unit_of_work import (
    OfferRepository,
    PricingUnitOfWork,
    ReliabilityRepository,
)


async def on_reliability_changed(
    uow: PricingUnitOfWork, event: Envelope[ReliabilityChanged]
) -> None:
    """Stage the seller's counts; the unit's commit keeps them and republishes its quotes."""
    change = event.payload
    uow.reliability_changes.stage(change.seller_id, change.seller, event)


class ReliabilityChanges:
    """The sellers' counts one unit of work received, each seller's largest, with its cause."""

    def __init__(
        self, *, reliability: ReliabilityRepository, offers: OfferRepository, books: Books
    ) -> None:
        self._reliability = reliability
        self._offers = offers
        self._books = books
        self._staged: dict[str, tuple[ReliabilityCounts, Envelope[Any]]] = {}

    def stage(self, seller_id: str, counts: ReliabilityCounts, cause: Envelope[Any]) -> None:
        """A seller's counts to keep at commit, unless this unit staged larger ones."""
        held = self._staged.get(seller_id)
        if supersedes(counts, None if held is None else held[0]):
            self._staged[seller_id] = (counts, cause)

    async def flush(self) -> None:
        """Keep the staged counts (one statement) and mark the books of the sellers whose
        counts changed (one query), each because of its seller's event."""
        staged, self._staged = self._staged, {}
        if not staged:
            return
        changed = await self._reliability.keep({s: counts for s, (counts, _) in staged.items()})
        if not changed:
            return  # replays, or counts older than those held
        books = await self._offers.books_of_sellers(sorted(changed))
        await self._books.markets({key for keys in books.values() for key in keys})
        for seller_id, (_, cause) in staged.items():
            for gpu, tier in books.get(seller_id, ()):
                self._books.mark(gpu, tier, cause)
