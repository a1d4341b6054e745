"""`gpux prices --watch`: the price stream connected, the table from GET /v1/prices, then each
quote of the price stream newer than the table's.

The fake stream carries quotes as pricing publishes them (``BestAskChanged``, every currency)
and then ends; the command reconnects, and that second request is interrupted as Ctrl-C would,
which ends the command (exit 0).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from gpux_contracts.money import Currency
from gpux_contracts.prices import BestAsk, BestAskChanged, PriceLevel
from gpux_devinfra.testing.cli import (
    FakeGateway,
    Handler,
    Route,
    answer,
    line_with,
    run,
    use_transport,
)
from gpux_devinfra.testing.market import STAMP, sse_response

pytestmark = pytest.mark.unit

AT = datetime(2025, 1, 1, 12, tzinfo=UTC)
INITIAL = {
    "items": [
        {
            "gpu": "rtx-4090",
            "tier": "on_demand",
            "region": "*",
            "currency": "USD",
            "best_ask": {
                "offer_id": "01OFFER",
                "price": "0.40",
                "currency": "USD",
                "offered_price": "0.40",
                "offered_currency": "USD",
                "gpus": 8,
                "seller_reliability": None,
            },
            "depth": [{"price": "0.40", "gpus": 8, "reliability": None, "min_reliability": None}],
            "as_of": STAMP,
        }
    ]
}


def quote(
    usd: str, gpus: int, *, region: str = "*", gpu: str = "rtx-4090", at: datetime = AT
) -> str:
    """A quote as pricing writes it to the price stream (priced in USD, shown in EUR too)."""
    prices = {Currency.USD: Decimal(usd), Currency.EUR: Decimal(usd) * Decimal("0.9")}
    best = BestAsk(
        offer_id="01OFFER2", price=Decimal(usd), currency=Currency.USD, prices=prices, gpus=gpus
    )
    level = PriceLevel(prices=prices, gpus=gpus)
    changed = BestAskChanged(
        gpu=gpu, tier="on_demand", region=region, best=best, depth=[level], as_of=at
    )
    return changed.model_dump_json()


class PriceStream:
    """GET /v1/stream/prices: the first connection carries ``events`` and ends; the next one is
    interrupted (Ctrl-C)."""

    def __init__(self, events: list[tuple[str, str, str]]) -> None:
        self.events = events
        self.connections: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.connections.append(request)
        if len(self.connections) > 1:
            raise KeyboardInterrupt
        return sse_response(self.events)


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch) -> PriceStream:
    feed = PriceStream(
        [
            ("best_ask", "1700000000000-0", quote("0.38", 6)),
            ("best_ask", "1700000000000-1", quote("0.30", 2, region="eu-west")),  # not shown
            ("best_ask", "1700000000001-0", quote("0.35", 3)),
        ]
    )
    routes: dict[Route, Handler] = {
        ("GET", "/v1/prices"): answer(200, INITIAL),
        ("GET", "/v1/stream/prices"): feed,
    }
    use_transport(monkeypatch, FakeGateway(routes))
    return feed


def test_watch_on_a_terminal_redraws_the_table_for_each_quote(stream: PriceStream) -> None:
    result = run("prices", "--watch", env={"TTY_COMPATIBLE": "1"})
    assert result.exit_code == 0, result.output
    frames = result.stdout.split("Best asks per GPU-hour (USD)")[1:]
    shown = [next(p for p in ("$0.40", "$0.38", "$0.35") if p in frame) for frame in frames]
    # GET /v1/prices first, one redraw per quote of its region, and Live's last as it stops
    assert shown == ["$0.40", "$0.38", "$0.35", "$0.35"]
    assert "$0.30" not in result.stdout
    first, second = stream.connections
    assert "last-event-id" not in first.headers  # from now
    assert second.headers["last-event-id"] == "1700000000001-0"  # resumed where it left off
    assert "authorization" not in first.headers


def test_watch_piped_prints_the_table_then_one_line_per_change(stream: PriceStream) -> None:
    result = run("prices", "--watch", "--currency", "EUR")
    assert result.exit_code == 0, result.output
    assert line_with(result.stdout, "rtx-4090 on_demand *").startswith("rtx-4090")
    changes = [line for line in result.stdout.splitlines() if line.startswith("rtx-4090")]
    assert changes == [
        "rtx-4090 on_demand *: €0.34 (6 GPUs) at 2025-01-01T12:00:00Z",  # 0.342 EUR
        "rtx-4090 on_demand *: €0.32 (3 GPUs) at 2025-01-01T12:00:00Z",  # 0.315 EUR, half-even
    ]
    assert "the stream ended; reconnecting" in result.stderr


def test_watch_json_is_each_quote_of_the_stream_as_it_came(stream: PriceStream) -> None:
    result = run("prices", "--watch", "--json")
    assert result.exit_code == 0, result.output
    quotes = [json.loads(line) for line in result.stdout.splitlines()]
    assert [q["best"]["prices"]["USD"] for q in quotes] == ["0.38", "0.35"]  # raw
    assert [q["region"] for q in quotes] == ["*", "*"]


def test_a_refused_price_stream_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    limited = answer(429, {"title": "Too many requests", "status": 429, "detail": "slow down"})
    routes = {("GET", "/v1/prices"): answer(200, INITIAL), ("GET", "/v1/stream/prices"): limited}
    use_transport(monkeypatch, FakeGateway(routes))
    result = run("prices", "--watch")
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 429 Too many requests: slow down"


def test_the_stream_is_connected_before_the_snapshot_is_read_and_older_quotes_are_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change priced after the snapshot was read is on the stream; one priced before the
    snapshot (the stream's, as it was being connected) is not shown over it."""
    snapshot_at = AT + timedelta(minutes=30)
    item: dict[str, Any] = {**INITIAL["items"][0], "as_of": snapshot_at.isoformat()}
    feed = PriceStream(
        [
            ("best_ask", "1700000000000-0", quote("0.38", 6)),  # 12:00, before the snapshot
            ("best_ask", "1700000000001-0", quote("0.35", 3, at=AT + timedelta(hours=1))),
        ]
    )
    gateway = FakeGateway(
        {("GET", "/v1/prices"): answer(200, {"items": [item]}), ("GET", "/v1/stream/prices"): feed}
    )
    use_transport(monkeypatch, gateway)
    result = run("prices", "--watch")
    assert result.exit_code == 0, result.output
    paths = [r.url.path for r in gateway.requests]
    assert paths[:2] == ["/v1/stream/prices", "/v1/prices"]
    changes = [line for line in result.stdout.splitlines() if line.startswith("rtx-4090")]
    assert changes == ["rtx-4090 on_demand *: $0.35 (3 GPUs) at 2025-01-01T13:00:00Z"]
