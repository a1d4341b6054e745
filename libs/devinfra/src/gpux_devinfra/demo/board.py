"""The live best-ask board: a snapshot from GET /v1/prices, then the SSE stream's updates.

The snapshot is read through ``gpux_sdk``; the stream with httpx (an SDK call reads a whole
answer, and the stream never ends), on the SDK clients' transport.

One row per GPU model and tier (all regions): the best ask as its seller priced it, the GPUs
at that price and in the whole book, and the best ask converted to each currency. Amounts are
the API's decimal strings, printed as they came.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import httpx
from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table

from gpux_devinfra import sdk_client
from gpux_devinfra.sdk_client import ApiError, call, public_client
from gpux_sdk import Client
from gpux_sdk.api.market_data import list_prices
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.price_out import PriceOut

CURRENCIES = ("EUR", "USD", "GBP")
ALL_REGIONS = "*"
DASH = "—"
FRESH_S = 3.0


class CatalogGpu(Protocol):
    """What the board needs of a catalog GPU (``gpux_sdk``'s ``GpuOut`` has it)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class Quote:
    """One book's best ask (all regions), with its price in every currency."""

    gpu: str
    tier: str
    price: str | None
    currency: str | None
    gpus_at_best: int
    gpus_offered: int
    prices: dict[str, str]
    as_of: datetime


def quote_from_event(data: dict[str, Any]) -> Quote:
    """A quote from a stream event (`best_ask.changed`'s payload)."""
    best = data.get("best")
    return Quote(
        gpu=data["gpu"],
        tier=data["tier"],
        price=best["price"] if best else None,
        currency=best["currency"] if best else None,
        gpus_at_best=best["gpus"] if best else 0,
        gpus_offered=sum(int(level["gpus"]) for level in data.get("depth", [])),
        prices=dict(best["prices"]) if best else {},
        as_of=datetime.fromisoformat(data["as_of"]),
    )


def quotes_from_prices(by_currency: Mapping[str, Iterable[PriceOut]]) -> list[Quote]:
    """Quotes from GET /v1/prices answers, one per currency, merged per book."""
    merged: dict[tuple[str, str], tuple[PriceOut, dict[str, str]]] = {}
    for currency, items in by_currency.items():
        for item in items:
            if item.region != ALL_REGIONS:
                continue
            _, prices = merged.setdefault((item.gpu, item.tier), (item, {}))
            if item.best_ask:
                prices[currency] = item.best_ask.price
    quotes = []
    for (gpu, tier), (item, prices) in merged.items():
        ask = item.best_ask
        quotes.append(
            Quote(
                gpu=gpu,
                tier=tier,
                price=ask.offered_price if ask else None,
                currency=str(ask.offered_currency) if ask else None,
                gpus_at_best=ask.gpus if ask else 0,
                gpus_offered=sum(level.gpus for level in item.depth),
                prices=prices,
                as_of=datetime.fromisoformat(item.as_of),
            )
        )
    return quotes


@dataclass
class Board:
    """The latest quote per book, safe to update from the stream's thread."""

    names: dict[str, str] = field(default_factory=dict)
    quotes: dict[tuple[str, str], Quote] = field(default_factory=dict)
    changed: dict[tuple[str, str], float] = field(default_factory=dict)
    updated: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def for_catalog(cls, gpus: Iterable[CatalogGpu]) -> Board:
        """An empty board that lists GPUs in the catalog's order with their names."""
        return cls(names={g.id: g.name for g in gpus})

    def apply(self, quote: Quote, *, now: float | None = None) -> bool:
        """Keep ``quote`` unless the board holds a newer one for its book."""
        key = (quote.gpu, quote.tier)
        with self._lock:
            current = self.quotes.get(key)
            if current is not None and current.as_of > quote.as_of:
                return False
            self.quotes[key] = quote
            self.changed[key] = time.monotonic() if now is None else now
            self.updated = self.changed[key]
            return True

    def rows(self) -> list[Quote]:
        """Books with a best ask: catalog order (then unknown ids), on-demand first."""
        order = {gpu: i for i, gpu in enumerate(self.names)}
        with self._lock:
            live = [q for q in self.quotes.values() if q.price is not None]
        return sorted(live, key=lambda q: (order.get(q.gpu, len(order)), q.gpu, q.tier))

    def table(self, *, now: float | None = None, caption: str = "") -> Table:
        """The board as a rich table; rows that changed in the last seconds stand out."""
        now = time.monotonic() if now is None else now
        table = Table(title="gpux: best asks per GPU-hour (live)", box=box.SIMPLE_HEAD)
        table.add_column("GPU", no_wrap=True)
        table.add_column("tier", no_wrap=True)
        for column in ("best ask", "GPUs at best", "GPUs offered", *CURRENCIES):
            table.add_column(column, justify="right", no_wrap=True)
        for quote in self.rows():
            fresh = now - self.changed.get((quote.gpu, quote.tier), -FRESH_S) < FRESH_S
            table.add_row(
                self.names.get(quote.gpu, quote.gpu),
                quote.tier,
                f"{quote.price} {quote.currency}",
                str(quote.gpus_at_best),
                str(quote.gpus_offered),
                *(quote.prices.get(c, DASH) for c in CURRENCIES),
                style="bold yellow" if fresh else None,
            )
        empty = "no offers yet" if not table.rows else ""
        table.caption = " · ".join(part for part in (empty, caption) if part)
        return table


def snapshot(client: Client, board: Board) -> None:
    """Fill the board from GET /v1/prices in each currency."""
    by_currency = {
        c: call(list_prices.sync_detailed, client, currency=Currency(c)).items for c in CURRENCIES
    }
    for quote in quotes_from_prices(by_currency):
        board.apply(quote)


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str, str]]:
    """(id, event, data) of each server-sent event in a stream of lines."""
    event_id, event = "", "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield event_id, event, "\n".join(data)
            event, data = "message", []
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)


def follow(
    url: str,
    board: Board,
    stop: threading.Event,
    *,
    transport: httpx.BaseTransport | None = None,
) -> None:
    """Apply GET /v1/stream/prices to the board until ``stop``; reconnects where it left off."""
    last_id = ""
    timeout = httpx.Timeout(10.0, read=60.0)
    through = sdk_client.httpx_args(transport)
    while not stop.is_set():
        headers = {"Last-Event-ID": last_id} if last_id else {}
        try:
            with (
                httpx.Client(base_url=url, timeout=timeout, **through) as http,
                http.stream("GET", "/v1/stream/prices", headers=headers) as response,
            ):
                if response.status_code != 200:
                    raise ApiError(f"stream answered {response.status_code}")
                for event_id, event, data in sse_events(response.iter_lines()):
                    last_id = event_id or last_id
                    if event == "best_ask":
                        quote = json.loads(data)
                        if quote.get("region") == ALL_REGIONS:
                            board.apply(quote_from_event(quote))
                    if stop.is_set():
                        return
        except (httpx.HTTPError, ApiError, ValueError, KeyError):
            pass
        stop.wait(2.0)


def start_following(url: str, board: Board) -> tuple[threading.Thread, threading.Event]:
    """Follow the stream in a daemon thread; set the event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=follow, args=(url, board, stop), name="gpux-prices-stream", daemon=True
    )
    thread.start()
    return thread, stop


def show_live(
    url: str,
    gpus: Iterable[CatalogGpu],
    console: Console,
    *,
    alive: Callable[[], bool] = lambda: True,
    caption: str = "Ctrl-C stops",
) -> None:
    """Print the board and keep it current until ``alive()`` fails (or Ctrl-C is raised)."""
    board = Board.for_catalog(gpus)
    _, stop = start_following(url, board)
    try:
        try:
            with public_client(url) as client:
                snapshot(client, board)
        except ApiError as exc:
            console.print(f"[yellow]no price snapshot ({exc}); waiting for the stream[/]")
        with Live(board.table(caption=caption), console=console, refresh_per_second=2) as live:
            while alive():
                time.sleep(0.5)
                stamp = time.strftime("%H:%M:%S")
                live.update(board.table(caption=f"{caption} · {stamp}"))
    finally:
        stop.set()
