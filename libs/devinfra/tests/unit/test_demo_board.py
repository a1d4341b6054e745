"""The live board: stream parsing, snapshots merged per currency, ordering and the table."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import dataclass

import httpx
import pytest
from rich.console import Console

from gpux_devinfra.demo.board import (
    Board,
    follow,
    quote_from_event,
    quotes_from_prices,
    sse_events,
)
from gpux_devinfra.testing.market import UNCOUNTED
from gpux_sdk.models.price_out import PriceOut

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Gpu:
    """A catalog GPU as the board reads one."""

    id: str
    name: str


GPUS = [Gpu("rtx-4090", "RTX 4090"), Gpu("h100-sxm", "H100 SXM")]


def event(gpu: str, tier: str, price: str, as_of: str, region: str = "*") -> dict[str, object]:
    prices = {"EUR": price, "USD": "9.99", "GBP": "8.88"}
    return {
        "gpu": gpu,
        "tier": tier,
        "region": region,
        "best": {"offer_id": "o", "price": price, "currency": "EUR", "prices": prices, "gpus": 4},
        "depth": [{"prices": prices, "gpus": 4}, {"prices": prices, "gpus": 6}],
        "as_of": as_of,
    }


def render(board: Board, now: float = 100.0) -> str:
    text = io.StringIO()
    Console(file=text, width=200, no_color=True).print(board.table(now=now, caption="Ctrl-C stops"))
    return text.getvalue()


def test_sse_lines_become_events() -> None:
    lines = ["id: 1-0", "event: best_ask", 'data: {"a": 1}', "", ": ping", "", "id: 2-0"]
    lines += ["event: best_ask", "data: x", "data: y", ""]
    assert list(sse_events(iter(lines))) == [
        ("1-0", "best_ask", '{"a": 1}'),
        ("2-0", "best_ask", "x\ny"),
    ]


def test_a_stream_quote_counts_every_gpu_in_the_book() -> None:
    quote = quote_from_event(event("rtx-4090", "on_demand", "0.39", "2025-01-01T00:00:00Z"))
    assert (quote.price, quote.currency, quote.gpus_at_best, quote.gpus_offered) == (
        "0.39",
        "EUR",
        4,
        10,
    )
    empty = quote_from_event({**event("h100-sxm", "on_demand", "1", "2025-01-01T00:00:00Z")})
    assert empty.prices["USD"] == "9.99"


def level(price: str, gpus: int) -> dict[str, object]:
    """A depth level of GET /v1/prices, its sellers never counted."""
    return {"price": price, "gpus": gpus, "reliability": UNCOUNTED, "min_reliability": None}


def test_snapshots_in_three_currencies_merge_into_one_quote_per_book() -> None:
    def item(currency: str, price: str, region: str = "*") -> PriceOut:
        ask = {
            "offer_id": "o",
            "price": price,
            "currency": currency,
            "offered_price": "2.49",
            "offered_currency": "USD",
            "gpus": 16,
            "seller_reliability": UNCOUNTED,
        }
        return PriceOut.from_dict(
            {
                "gpu": "h100-sxm",
                "tier": "on_demand",
                "region": region,
                "currency": currency,
                "best_ask": ask,
                "depth": [level(price, 16), level("3", 8)],
                "as_of": "2025-01-01T00:00:00Z",
            }
        )

    quotes = quotes_from_prices(
        {
            "EUR": [item("EUR", "2.2908"), item("EUR", "2.2908", region="us-south")],
            "USD": [item("USD", "2.49")],
            "GBP": [item("GBP", "1.9414")],
        }
    )
    assert len(quotes) == 1
    quote = quotes[0]
    assert (quote.price, quote.currency, quote.gpus_offered) == ("2.49", "USD", 24)
    assert quote.prices == {"EUR": "2.2908", "USD": "2.49", "GBP": "1.9414"}


def test_an_older_quote_never_replaces_a_newer_one() -> None:
    board = Board.for_catalog(GPUS)
    newer = quote_from_event(event("rtx-4090", "on_demand", "0.30", "2025-01-01T00:00:05Z"))
    older = quote_from_event(event("rtx-4090", "on_demand", "0.50", "2025-01-01T00:00:01Z"))
    assert board.apply(newer, now=1)
    assert not board.apply(older, now=2)
    assert board.rows()[0].price == "0.30"


def test_the_table_lists_books_in_catalog_order_with_every_currency() -> None:
    board = Board.for_catalog(GPUS)
    board.apply(quote_from_event(event("h100-sxm", "interruptible", "1.65", "2025-01-01T00:00Z")))
    board.apply(quote_from_event(event("rtx-4090", "on_demand", "0.39", "2025-01-01T00:00Z")))
    board.apply(quote_from_event(event("rtx-4090", "interruptible", "0.24", "2025-01-01T00:00Z")))
    gone = {**event("h100-sxm", "on_demand", "1", "2025-01-01T00:00Z"), "best": None}
    board.apply(quote_from_event(gone))
    text = render(board, now=1e9)
    rows = [line for line in text.splitlines() if "RTX" in line or "H100" in line]
    assert [r.split()[0:3] for r in rows] == [
        ["RTX", "4090", "interruptible"],
        ["RTX", "4090", "on_demand"],
        ["H100", "SXM", "interruptible"],
    ]
    for cell in ("0.39 EUR", "4", "10", "9.99", "8.88"):
        assert cell in rows[1]
    assert "Ctrl-C stops" in text


def test_an_empty_board_says_so() -> None:
    assert "no offers yet" in render(Board.for_catalog(GPUS))


def test_follow_applies_the_stream_and_resumes_with_last_event_id() -> None:
    board = Board.for_catalog(GPUS)
    stop = threading.Event()
    seen: list[str | None] = []

    def stream(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("last-event-id"))
        if len(seen) > 1:
            stop.set()
            return httpx.Response(503)
        quote = event("rtx-4090", "on_demand", "0.41", "2025-01-01T00:00:00Z")
        regional = event("rtx-4090", "on_demand", "0.10", "2025-01-01T00:00:00Z", "eu-north")
        body = "".join(
            f"id: {i}-0\nevent: best_ask\ndata: {json.dumps(q)}\n\n"
            for i, q in enumerate([quote, regional], start=1)
        )
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    runner = threading.Thread(
        target=follow,
        args=("http://gw", board, stop),
        kwargs={"transport": httpx.MockTransport(stream)},
    )
    runner.start()
    runner.join(10)
    assert not runner.is_alive()
    assert seen == [None, "2-0"]
    assert [(q.gpu, q.price) for q in board.rows()] == [("rtx-4090", "0.41")]
