"""`gpux order buy --wait`: progress from the account's event stream until the order is final.

A fake gateway answers the order, a stream of the account's events (``text/event-stream``, as
the gateway writes it) and the order's readings (GET /v1/orders/{id}, one answer after another);
the exit code says whether the order ended filled.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import Result

from gpux_devinfra import order_wait
from gpux_devinfra.order_wait import Progress
from gpux_devinfra.sse import SseEvent
from gpux_devinfra.testing.cli import KEY, FakeGateway, Handler, answer, run, use_transport
from gpux_devinfra.testing.market import (
    ORDER,
    account_event,
    fill,
    order_detail,
    order_filled,
    order_updated,
    sse_body,
    sse_response,
)
from gpux_sdk.models.order_detail_out import OrderDetailOut
from gpux_sdk.models.order_out import OrderOut

pytestmark = pytest.mark.unit

BUY = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--limit", "0.45", "--currency", "USD"]
FILLED = order_detail("filled", [fill("01TRADE1", 1), fill("01TRADE2", 1)])


class Readings:
    """GET /v1/orders/01ORDER: each answer in turn, the last one from then on."""

    def __init__(self, *details: dict[str, Any]) -> None:
        self.details = list(details)
        self.count = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        return httpx.Response(200, json=self.details[min(self.count, len(self.details)) - 1])


def _serve(monkeypatch: pytest.MonkeyPatch, stream: Handler, readings: Handler) -> FakeGateway:
    """The gateway every command of the test talks to: it takes the order, streams its events
    from ``stream`` and answers its readings from ``readings``."""
    gateway = FakeGateway(
        {
            ("POST", "/v1/orders"): answer(202, ORDER),
            ("GET", "/v1/stream/events"): stream,
            ("GET", "/v1/orders/01ORDER"): readings,
        }
    )
    use_transport(monkeypatch, gateway)
    return gateway


def _wait(exit_code: int = 0) -> Result:
    """`gpux order buy ... --wait`; its result, once it exited with ``exit_code``."""
    result = run(*BUY, "--wait", "--key", KEY)
    assert result.exit_code == exit_code, result.output
    return result


def _streams_then_filled(
    monkeypatch: pytest.MonkeyPatch, events: list[tuple[str, str, str]]
) -> FakeGateway:
    """``_serve`` with a stream of ``events``; the order reads as pending_funds, then filled."""
    return _serve(
        monkeypatch,
        lambda _: sse_response(events),
        Readings(order_detail("pending_funds", []), FILLED),
    )


@pytest.fixture
def filling(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    """A stream on which the order opens, fills one GPU, then the other."""
    events = [
        order_updated(1, "open", 0),
        account_event("order.updated", 2, {"order_id": "01OTHER", "status": "rejected"}),
        order_filled(3, "01TRADE1", 1),
        order_updated(4, "partially_filled", 1),
        account_event(
            "lease.opened",
            5,
            {"lease_id": "01TRADE1", "order_id": "01ORDER", "gpu": "rtx-4090", "gpus": 1},
        ),
        order_filled(6, "01TRADE2", 1),
        order_updated(7, "filled", 2),
    ]
    return _streams_then_filled(monkeypatch, events)


def test_wait_shows_each_step_and_exits_0_once_filled(filling: FakeGateway) -> None:
    result = _wait()
    assert result.stdout.splitlines() == [
        "order 01ORDER: pending_funds, 0 of 2 GPUs filled",
        "order 01ORDER: open, 0 of 2 GPUs filled",
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE1",
        "order 01ORDER: partially_filled, 1 of 2 GPUs filled",
        "  lease 01TRADE1 opened: 1 x rtx-4090",
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE2",
        "order 01ORDER: filled, 2 of 2 GPUs filled",
    ]
    placed, stream = filling.requests[0], filling.requests[1]
    assert (placed.method, placed.url.path) == ("POST", "/v1/orders")
    assert placed.headers["idempotency-key"]
    assert (stream.method, stream.url.path) == ("GET", "/v1/stream/events")
    assert stream.headers["authorization"] == f"Bearer {KEY}"
    assert stream.headers["accept"] == "text/event-stream"
    readings = [r for r in filling.requests if r.url.path == "/v1/orders/01ORDER"]
    assert len(readings) == 2  # once the stream answered, and once the order was final


def test_wait_with_json_prints_the_final_order_and_the_steps_on_stderr(
    filling: FakeGateway,
) -> None:
    result = run(*BUY, "--wait", "--json", "--key", KEY)
    assert result.exit_code == 0, result.output
    final = json.loads(result.stdout)
    assert final["status"] == "filled"
    assert [f["trade_id"] for f in final["fills"]] == ["01TRADE1", "01TRADE2"]
    assert "order 01ORDER: filled, 2 of 2 GPUs filled" in result.stderr


def test_wait_exits_1_saying_why_when_the_order_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    why = {"reason": "insufficient_funds", "shortfall": "1.35", "shortfall_currency": "USD"}
    events = [order_updated(1, "rejected", 0, **why)]
    rejected = order_detail("rejected", [], **why)
    _serve(
        monkeypatch,
        lambda _: sse_response(events),
        Readings(order_detail("pending_funds", []), rejected),
    )
    result = _wait(1)
    told = "order 01ORDER: rejected (insufficient_funds, short $1.35), 0 of 2 GPUs filled"
    assert result.stdout.splitlines()[-1] == told
    assert result.stderr.strip() == (
        "gpux: order 01ORDER rejected (insufficient_funds, short $1.35)"
    )


def test_a_market_order_cancelled_after_a_partial_fill_exits_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = [order_filled(1, "01TRADE1", 1), order_updated(2, "cancelled", 1)]
    cancelled = order_detail("cancelled", [fill("01TRADE1", 1)], reason="no_liquidity")
    _serve(
        monkeypatch, lambda _: sse_response(events), Readings(order_detail("open", []), cancelled)
    )
    result = _wait(1)
    assert "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE1" in result.stdout
    assert result.stderr.strip() == "gpux: order 01ORDER cancelled (no_liquidity)"


def test_when_the_stream_drops_the_order_is_read_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def dropped(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset", request=request)

    _serve(monkeypatch, dropped, Readings(FILLED))
    result = _wait()
    lines = result.stdout.splitlines()
    assert "  (the event stream dropped: ReadError; reading the order)" in lines
    assert "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE2" in lines
    assert lines[-1] == "order 01ORDER: filled, 2 of 2 GPUs filled"


def test_a_stream_refused_is_also_read_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    _serve(monkeypatch, answer(503, {"title": "Unavailable", "status": 503}), Readings(FILLED))
    result = _wait()
    assert "  (the event stream dropped: 503 Unavailable; reading the order)" in result.stdout


def test_an_order_refused_when_placed_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    gateway = _serve(monkeypatch, lambda _: sse_response([]), Readings(FILLED))
    gateway.problem = {"title": "Forbidden", "status": 403, "detail": "a buyer's key"}
    result = _wait(1)
    assert result.stderr.strip() == "gpux: 403 Forbidden: a buyer's key"
    assert len(gateway.requests) == 1


def test_wait_gives_up_at_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock that jumps 30 s per look: the order stays open, --timeout 60 ends the wait."""
    ticks: Iterator[float] = iter(range(0, 10_000, 30))
    monkeypatch.setattr(order_wait, "clock", lambda: float(next(ticks)))
    monkeypatch.setattr(order_wait, "pause", lambda _: None)
    events = [order_updated(1, "open", 0)]
    _serve(monkeypatch, lambda _: sse_response(events), Readings(order_detail("open", [])))
    result = run(*BUY, "--wait", "--timeout", "60", "--key", KEY)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "gpux: after 60 s, order 01ORDER is still open (`gpux order cancel 01ORDER` ends it)"
    )


def test_ctrl_c_stops_the_wait_and_says_how_to_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    _serve(monkeypatch, interrupted, Readings(order_detail("open", [])))
    result = _wait(130)
    assert result.stderr.strip() == (
        "gpux: stopped waiting; order 01ORDER is still pending_funds"
        " (`gpux order cancel 01ORDER` ends it)"
    )


def _progress() -> Progress:
    return Progress.of(OrderOut.from_dict(ORDER))


def _event(kind_seq_data: tuple[str, str, str]) -> SseEvent:
    kind, cursor, data = kind_seq_data
    return SseEvent(kind, cursor, data)


def test_progress_never_steps_back_nor_repeats() -> None:
    progress = _progress()
    partial = OrderDetailOut.from_dict(order_detail("partially_filled", [fill("01TRADE1", 1)]))
    assert progress.reading(partial) == [
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE1",
        "order 01ORDER: partially_filled, 1 of 2 GPUs filled",
    ]
    assert progress.event(_event(order_updated(1, "open", 0))) == []  # older than the reading
    assert progress.event(_event(order_filled(2, "01TRADE1", 1))) == []  # told already
    assert progress.reading(partial) == []
    # Final before its second fill is told: the status waits for the fill, then comes last.
    assert progress.event(_event(order_updated(3, "filled", 2))) == []
    assert (progress.final, progress.owed) == (True, True)
    assert progress.event(_event(order_filled(4, "01TRADE2", 1))) == [
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE2",
        "order 01ORDER: filled, 2 of 2 GPUs filled",
    ]
    assert not progress.owed
    assert progress.event(_event(order_updated(5, "cancelled", 2))) == []  # final stays final
    assert progress.finish() == []  # nothing owed


def test_progress_ignores_what_is_not_about_its_order() -> None:
    progress = _progress()
    assert progress.event(SseEvent("order.updated", "1.1", "not json")) == []
    assert progress.event(_event(account_event("balance.updated", 2, {"currency": "USD"}))) == []
    other = account_event("order.filled", 3, {"order_id": "01OTHER", "trade_id": "01T"})
    assert progress.event(_event(other)) == []
    assert not progress.final


@pytest.fixture
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The wait's pauses, taken at once."""
    taken: list[float] = []
    monkeypatch.setattr(order_wait, "pause", taken.append)
    return taken


def test_a_final_status_before_its_fills_is_told_after_them(
    monkeypatch: pytest.MonkeyPatch, no_pauses: list[float]
) -> None:
    """order.updated (orders.status) may come before order.filled (market.trades)."""
    events = [
        order_updated(1, "filled", 2),
        order_filled(2, "01TRADE1", 1),
        order_filled(3, "01TRADE2", 1),
    ]
    _streams_then_filled(monkeypatch, events)
    result = _wait()
    assert result.stdout.splitlines() == [
        "order 01ORDER: pending_funds, 0 of 2 GPUs filled",
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE1",
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE2",
        "order 01ORDER: filled, 2 of 2 GPUs filled",
    ]


def test_a_final_order_is_read_until_its_fills_reach_the_orders_view(
    monkeypatch: pytest.MonkeyPatch, no_pauses: list[float]
) -> None:
    """The stream says filled and no fill event comes; the view shows the status first, its
    fills a reading later: both fills are told, and the status last."""
    lagging = order_detail("filled", [], filled_gpus=2, remaining_gpus=0)
    readings = Readings(order_detail("pending_funds", []), lagging, FILLED)
    _serve(monkeypatch, lambda _: sse_response([order_updated(1, "filled", 2)]), readings)
    result = run(*BUY, "--wait", "--json", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[1:] == [
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE1",
        "  filled 1 GPU from offer 01OFFER at $0.40/GPU-h: lease 01TRADE2",
        "order 01ORDER: filled, 2 of 2 GPUs filled",
    ]
    assert [f["trade_id"] for f in json.loads(result.stdout)["fills"]] == ["01TRADE1", "01TRADE2"]
    assert readings.count == 3


def test_a_failed_reading_of_the_order_is_tried_again(
    monkeypatch: pytest.MonkeyPatch, no_pauses: list[float]
) -> None:
    def dropped(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset", request=request)

    answers = [
        httpx.Response(500, json={"title": "Internal error", "status": 500}),
        httpx.Response(200, json=order_detail("open", [])),
        httpx.Response(200, json=FILLED),
    ]
    _serve(monkeypatch, dropped, lambda _: answers.pop(0))
    result = _wait()
    lines = result.stdout.splitlines()
    assert "  (the order could not be read: 500 Internal error; trying again)" in lines
    assert lines[-1] == "order 01ORDER: filled, 2 of 2 GPUs filled"


def test_the_order_is_read_once_the_stream_sent_its_first_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gateway answers the stream's headers before it chooses where the stream starts:
    a reading before the first line could miss what happens in between."""
    pulled: list[bool] = []
    seen: list[bool] = []

    def stream(_: httpx.Request) -> httpx.Response:
        def body() -> Iterator[bytes]:
            pulled.append(True)
            yield sse_body([order_updated(1, "open", 0)])

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    readings = Readings(FILLED)

    def read(request: httpx.Request) -> httpx.Response:
        seen.append(bool(pulled))
        return readings(request)

    _serve(monkeypatch, stream, read)
    _wait()
    assert seen[0] is True


def test_a_missed_event_ends_the_wait_at_the_next_reading_not_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream of pings only (the order's events were missed) and a clock 5 s further at
    each look: the order is read again every REREAD_S and found filled; the Ctrl-C at the
    stream's end would say the wait went on till then."""
    ticks = itertools.count(0, 5)
    monkeypatch.setattr(order_wait, "clock", lambda: float(next(ticks)))

    def pings(_: httpx.Request) -> httpx.Response:
        def body() -> Iterator[bytes]:
            yield b": account events\nretry: 3000\n\n"
            for _ in range(100):
                yield b": ping\n\n"
            raise KeyboardInterrupt

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    readings = Readings(order_detail("open", []), FILLED)
    gateway = _serve(monkeypatch, pings, readings)
    result = run(*BUY, "--wait", "--timeout", "3600", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "order 01ORDER: filled, 2 of 2 GPUs filled"
    assert [r.url.path for r in gateway.requests].count("/v1/stream/events") == 1
