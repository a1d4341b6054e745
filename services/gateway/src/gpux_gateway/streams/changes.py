"""What makes a price-stream entry worth sending: its book's quote changed, and it comes later.

Pure: a quote's book and what it says, each book's last word, and the order of stream ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import NamedTuple


class Said(NamedTuple):
    """One entry's book (``gpu|tier|region``) and what its quote says, whatever its time."""

    book: str
    quote: str


def said(data: str) -> Said:
    """What an entry's JSON says, its ``as_of`` left out (data that is not a quote is its own
    book, so it passes unless repeated)."""
    try:
        body = json.loads(data)
    except ValueError:
        return Said(data, data)
    if not isinstance(body, dict):
        return Said(data, data)
    book = "|".join(str(body.get(field)) for field in ("gpu", "tier", "region"))
    quote = {k: v for k, v in body.items() if k != "as_of"}
    return Said(book, json.dumps(quote, sort_keys=True))


class Changes:
    """What each book last said on the stream; passes an entry only when it says something new."""

    def __init__(self, seen: Iterable[str] = ()) -> None:
        self._said: dict[str, str] = {}
        for data in seen:
            self.is_new(data)

    def is_new(self, data: str) -> bool:
        """Whether this entry changes what its book said (and remember it)."""
        return self.changes(said(data))

    def changes(self, what: Said) -> bool:
        """Whether ``what`` changes what its book said (and remember it)."""
        if self._said.get(what.book) == what.quote:
            return False
        self._said[what.book] = what.quote
        return True

    def copy(self) -> Changes:
        """The same books' last words, to go on apart."""
        twin = Changes()
        twin._said = dict(self._said)
        return twin


def entry_order(entry_id: str) -> tuple[int, int]:
    """A stream id (``<ms>-<seq>``) as what orders it."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def is_after(entry_id: str, cursor: str) -> bool:
    """Whether the entry ``entry_id`` comes after the entry ``cursor`` in the stream."""
    return entry_order(entry_id) > entry_order(cursor)
