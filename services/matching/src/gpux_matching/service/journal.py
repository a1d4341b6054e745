"""The commands a unit of work applied to its partition's engine, logged when it commits.

Each handler applies its command to the engine at once (the next one in the batch must see
its effect) and notes it here with what it needs to be announced later: its result, its
cause, its time, and how many events the unit had queued before it; the journal also keeps
which books each command changed. ``seal``, called by the unit's ``commit``, logs every
command of the unit in one insert, which gives them their sequence numbers; looks up the
owners of the orders and offers their results name (one query each); and queues each
command's trades and statuses in the outbox at the place it happened, so they read as if
each command had been written on its own.

Book levels are state, not steps (``market.book`` is compacted): after the unit's other
events, ``seal`` queues at most one ``book.levels_changed`` per book the unit changed, with
the book's levels as the unit leaves them, read from the engine once per changed book. It
carries the sequence, time and cause of the unit's last command that changed the book, so
its id is the one a replay of the unit gives again and readers that keep the highest
sequence per key keep it. A book whose levels (at the same rates) are what the partition
last published for it is not published again (``Partition.shown``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from gpux_contracts.book import BOOK_DEPTH
from gpux_contracts.events import Envelope
from gpux_matching.domain import Command, MatchingEngine, Result, books_changed
from gpux_matching.service.publishing import Shown, announce, announce_book, shown
from gpux_matching.service.unit_of_work import BookUnitOfWork
from gpux_platform.broker import Outgoing

Book = tuple[str, str]
"""A book: (GPU model, tier)."""


class Logged(NamedTuple):
    """One command applied in a unit, with what its announcement needs."""

    command: Command
    result: Result
    cause: Envelope[Any] | None
    """The input event it came from (None: the book's own, such as expiry or an FX rate)."""
    now: datetime
    position: int
    """Events queued in the unit's outbox before this command."""


class Journal:
    """The commands of one unit, in the order they were applied."""

    def __init__(self) -> None:
        self.entries: list[Logged] = []
        self.seqs: list[int] = []
        """Their sequence numbers, once ``seal`` logged them."""
        self.books: dict[Book, int] = {}
        """Each book the unit changed, with the index of the last entry that changed it
        (in the order of those last changes)."""
        self.shown: dict[Book, Shown] = {}
        """What ``seal`` published of each book (the partition remembers it once the unit
        committed)."""

    def note(
        self,
        engine: MatchingEngine,
        command: Command,
        result: Result,
        *,
        cause: Envelope[Any] | None,
        now: datetime,
        position: int,
    ) -> None:
        """Note a command the engine just applied (the engine as it is right after it)."""
        index = len(self.entries)
        for book in books_changed(engine, command, result):
            self.books.pop(book, None)  # to the end: the order of the books' last changes
            self.books[book] = index
        self.entries.append(Logged(command, result, cause, now, position))


async def seal(uow: BookUnitOfWork) -> None:
    """Log the unit's commands (one insert), queue their trades and statuses where they
    happened, then the levels of the books the unit changed."""
    journal = uow.journal
    entries = journal.entries
    if not entries:
        return
    seqs = await uow.commands.append(uow.partition.number, [e.command for e in entries])
    order_ids = sorted({u.order_id for e in entries for u in e.result.orders})
    offer_ids = sorted({u.offer_id for e in entries for u in e.result.offers})
    buyers = await uow.orders.owners(order_ids) if order_ids else {}
    sellers = await uow.offers.owners(offer_ids) if offer_ids else {}
    queued = uow.outbox.messages
    merged: list[Outgoing] = []
    done = 0
    for entry, seq in zip(entries, seqs, strict=True):
        merged += queued[done : entry.position]
        done = entry.position
        merged += announce(entry, seq, buyers, sellers)
    merged += queued[done:]
    merged += book_updates(uow, seqs)
    uow.outbox.messages = merged
    journal.seqs = seqs


def book_updates(uow: BookUnitOfWork, seqs: Sequence[int]) -> list[Outgoing]:
    """One ``book.levels_changed`` per book the unit changed, with its levels now, unless
    the partition last published exactly these."""
    journal, partition = uow.journal, uow.partition
    engine = partition.engine
    rates = engine.rates
    messages = []
    for book, index in journal.books.items():
        levels = engine.levels(*book, BOOK_DEPTH)
        state = shown(levels, rates)
        if partition.shown.get(book) == state:
            continue
        journal.shown[book] = state
        messages.append(announce_book(journal.entries[index], seqs[index], levels, rates))
    return messages
