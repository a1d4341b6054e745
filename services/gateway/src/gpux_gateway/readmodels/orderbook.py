"""The gateway's view of the order books, rebuilt from the compacted ``market.book`` topic.

Like the market sessions view (see ``market``), read whole without a consumer group (see
``gpux_platform.compacted``), so every replica holds the latest levels of every book (a few
records per GPU model). Per key (``gpu|tier``) it keeps the record with
the highest ``sequence``: an older state that arrives later (a republished outbox row) is
dropped. A record it cannot read is logged and skipped; a tombstone removes its book. Ready
once it has read up to the end offsets found at start-up.
"""

from __future__ import annotations

from typing import Any

from gpux_contracts.book import BookLevelsChanged, book_key
from gpux_contracts.events import EventCodec
from gpux_platform.compacted import CompactedView


class BookView(CompactedView):
    """The latest levels per book (``gpu|tier``), kept in memory."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic)
        self._codec: EventCodec[Any] = EventCodec(BookLevelsChanged)
        self._books: dict[str, BookLevelsChanged] = {}

    def book(self, gpu: str, tier: str) -> BookLevelsChanged | None:
        """The latest levels of one book, or None if matching never published it."""
        return self._books.get(book_key(gpu, tier))

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record into the view (never raises on bad data)."""
        self._read(topic, partition, offset)
        if key is None:
            self._reject(topic, offset, "a record without a key")
            return
        name = key.decode(errors="replace")
        if value is None:
            self._books.pop(name, None)
            return
        try:
            payload = self._codec.decode(value).payload
        except ValueError as exc:
            self._reject(topic, offset, repr(exc))
            return
        if (
            not isinstance(payload, BookLevelsChanged)
            or book_key(payload.gpu, payload.tier) != name
        ):
            self._reject(topic, offset, f"a record for another book under key {name!r}")
            return
        held = self._books.get(name)
        if held is None or held.sequence <= payload.sequence:
            self._books[name] = payload
