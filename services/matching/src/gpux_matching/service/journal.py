"""The commands a unit of work applied to its partition's engine, logged when it commits.

Each handler applies its command to the engine at once (the next one in the batch must see
its effect) and notes it here with what it needs to be announced later: its result, its
cause, its time, the levels of the books it changed as they stood right after it, and how
many events the unit had queued before it. ``seal``, called by the unit's ``commit``, logs
every command of the unit in one insert, which gives them their sequence numbers; looks up
the owners of the orders and offers their results name (one query each); and queues each
command's events in the outbox at the place it happened, so the outbox reads as if each
command had been written on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from gpux_contracts.book import BOOK_DEPTH
from gpux_contracts.events import Envelope
from gpux_matching.domain import BookLevels, Command, MatchingEngine, Rate, Result, books_changed
from gpux_matching.service.publishing import announce
from gpux_matching.service.unit_of_work import BookUnitOfWork
from gpux_platform.broker import Outgoing


class Logged(NamedTuple):
    """One command applied in a unit, with what its announcement needs."""

    command: Command
    result: Result
    cause: Envelope[Any] | None
    """The input event it came from (None: the book's own, such as expiry or an FX rate)."""
    now: datetime
    books: tuple[BookLevels, ...]
    """The levels of each book the command changed, right after it."""
    rates: Mapping[str, Rate]
    """The engine's rates right after it (the books' prices are converted with them)."""
    position: int
    """Events queued in the unit's outbox before this command."""


class Journal:
    """The commands of one unit, in the order they were applied."""

    def __init__(self) -> None:
        self.entries: list[Logged] = []
        self.seqs: list[int] = []
        """Their sequence numbers, once ``seal`` logged them."""

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
        books = books_changed(engine, command, result)
        levels = tuple(engine.levels(gpu, tier, BOOK_DEPTH) for gpu, tier in books)
        rates = engine.rates if books else {}
        self.entries.append(Logged(command, result, cause, now, levels, rates, position))


async def seal(uow: BookUnitOfWork) -> None:
    """Log the unit's commands (one insert) and queue their events where they happened."""
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
    uow.outbox.messages = merged
    journal.seqs = seqs
