"""`gpux prices --watch`: the best asks as they change, from GET /v1/stream/prices.

The stream is connected first and the table then starts from GET /v1/prices, so a change
between the two is on the stream rather than lost; a quote of the stream older than the one
the table shows for its book (the snapshot's, or a later one) is ignored. Each ``best_ask``
event of the stream is one book's new quote as pricing published it (``gpu``, ``tier``,
``region``, ``best`` with its ``prices`` in every currency and its ``gpus``, ``as_of``),
shown in the currency asked for; a quote without a price in that currency shows no offer, as
/v1/prices does. Only the fields the table shows are read, so a quote that gains a field
still shows. On a terminal the table is redrawn in place (rich ``Live``); piped, each change
is one line, so a log sees it as it comes rather than when the command ends; ``--json``
prints each quote of the stream as it came, one a line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from gpux_devinfra import amounts
from gpux_devinfra.cli_streams import Stream, price_request
from gpux_devinfra.market_tables import BookQuote, prices_table
from gpux_devinfra.sse import SseEvent
from gpux_sdk import Client

BookKey = tuple[str, str, str]
"""A book: GPU model, tier, region."""


def stream_quote(data: str, currency: str) -> BookQuote | None:
    """A quote of the price stream as the table shows it in ``currency`` (None: data that is
    no quote)."""
    try:
        body = json.loads(data)
        book = {name: body[name] for name in ("gpu", "tier", "region", "as_of")}
        best: dict[str, Any] | None = body["best"]
        price = None if best is None else best["prices"].get(currency)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not all(isinstance(value, str) for value in book.values()):
        return None
    gpus = best.get("gpus") if best is not None and price is not None else None
    return BookQuote(
        gpu=book["gpu"],
        tier=book["tier"],
        region=book["region"],
        price=None if price is None else str(price),
        currency=currency,
        gpus=gpus if isinstance(gpus, int) else None,
        as_of=book["as_of"],
    )


def _instant(as_of: str) -> datetime | None:
    try:
        return datetime.fromisoformat(as_of)
    except ValueError:
        return None


def older(quote: BookQuote, than: BookQuote) -> bool:
    """Whether ``quote`` was priced before ``than`` (False when either instant is unreadable)."""
    mine, theirs = _instant(quote.as_of), _instant(than.as_of)
    if mine is None or theirs is None or (mine.tzinfo is None) != (theirs.tzinfo is None):
        return False
    return mine < theirs


class Board:
    """The books shown: each one's latest quote in one currency, in the order first seen."""

    def __init__(self, currency: str, region: str, quotes: Iterable[BookQuote] = ()) -> None:
        self.currency = currency
        self.region = region
        self._books: dict[BookKey, BookQuote] = {}
        self.load(quotes)

    def load(self, quotes: Iterable[BookQuote]) -> None:
        """Take a snapshot's quotes (GET /v1/prices)."""
        for quote in quotes:
            self._books[(quote.gpu, quote.tier, quote.region)] = quote

    def quotes(self) -> list[BookQuote]:
        """Every book's latest quote."""
        return list(self._books.values())

    def apply(self, event: SseEvent) -> BookQuote | None:
        """Take one event of the stream; the quote it shows (None: not a quote of this
        board's region, or older than the book's quote shown)."""
        if event.event != "best_ask":
            return None
        quote = stream_quote(event.data, self.currency)
        if quote is None or quote.region != self.region:
            return None
        key = (quote.gpu, quote.tier, quote.region)
        shown = self._books.get(key)
        if shown is not None and older(quote, shown):
            return None
        self._books[key] = quote
        return quote

    def table(self) -> Table:
        """The board as the prices table."""
        return prices_table(self.quotes(), self.currency)


def change_line(quote: BookQuote) -> str:
    """`rtx-4090 on_demand *: $0.40 (8 GPUs) at 2025-…`, one book's new quote."""
    if quote.price is None:
        best = f"{amounts.DASH} (no offer)"
    else:
        best = f"{amounts.money(quote.price, quote.currency)} ({quote.gpus} GPUs)"
    return f"{quote.gpu} {quote.tier} {quote.region}: {best} at {quote.as_of}"


class Screen:
    """Where the board is shown: redrawn in place on a terminal (rich ``Live``), the table and
    then a line a change when piped, each quote's JSON as it came with ``--json``."""

    def __init__(self, board: Board, *, as_json: bool, console: Console | None = None) -> None:
        self.board = board
        self.as_json = as_json
        self.console = console or Console()
        self._live: Live | None = None

    def start(self, quotes: Iterable[BookQuote]) -> None:
        """Show the board from a snapshot's quotes."""
        self.board.load(quotes)
        if self.as_json:
            return
        if self.console.is_terminal:
            self._live = Live(self.board.table(), console=self.console, auto_refresh=False)
            self._live.start(refresh=True)
        else:
            self.console.print(self.board.table())

    def changed(self, event: SseEvent, quote: BookQuote) -> None:
        """Show one book's new quote (``event``: as the stream sent it)."""
        if self.as_json:
            print(event.data, flush=True)
        elif self._live is not None:
            self._live.update(self.board.table(), refresh=True)
        else:
            print(change_line(quote), flush=True)

    def stop(self) -> None:
        """Leave the terminal as the last redraw left it."""
        if self._live is not None:
            self._live.stop()
            self._live = None


def watch(
    client: Client,
    board: Board,
    snapshot: Callable[[], Iterable[BookQuote]],
    *,
    as_json: bool,
    note: Callable[[str], None],
) -> None:
    """Connect to the price stream, then show the board from ``snapshot`` (GET /v1/prices),
    then every change the stream brings, until interrupted (Ctrl-C)."""
    screen = Screen(board, as_json=as_json)
    stream = Stream(client, price_request)
    try:
        for event in stream.follow(note, opened=lambda: screen.start(snapshot())):
            quote = board.apply(event)
            if quote is not None:
                screen.changed(event, quote)
    finally:
        screen.stop()
