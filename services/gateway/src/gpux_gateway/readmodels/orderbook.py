"""The gateway's view of the order books, rebuilt from the compacted ``market.book`` topic.

Like the market sessions view, read whole without a consumer group (``keyed``): every replica
holds the latest levels of every book (a few records per GPU model). Per key (``gpu|tier``) it
keeps the record with the highest ``sequence``: an older state that arrives later (a
republished outbox row) is dropped; a tombstone removes its book.
"""

from __future__ import annotations

from gpux_contracts.book import BookLevelsChanged, book_key
from gpux_gateway.readmodels.keyed import KeyedView


class BookView(KeyedView[BookLevelsChanged]):
    """The latest levels per book (``gpu|tier``), kept in memory."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic, BookLevelsChanged, "book")

    def key_of(self, payload: BookLevelsChanged) -> str:
        """Levels are kept under their book's key."""
        return book_key(payload.gpu, payload.tier)

    def _keep(self, key: str, payload: BookLevelsChanged) -> None:
        held = self._held.get(key)
        if held is None or held.sequence <= payload.sequence:
            self._held[key] = payload

    def book(self, gpu: str, tier: str) -> BookLevelsChanged | None:
        """The latest levels of one book, or None if matching never published it."""
        return self._held.get(book_key(gpu, tier))
