"""`gpux events listen` against a fake gateway and a fake receiver: it prints each event, keeps
only the types asked for, resumes a dropped stream with Last-Event-ID, forwards each event
signed so that ``gpux_contracts.webhooks.verify`` accepts it, and stops on a refusal."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from gpux_contracts.webhooks import verify
from gpux_devinfra import cli_events
from gpux_devinfra.sse import SseEvent, SseParser
from gpux_devinfra.testing.cli import KEY, line_with, problem, use_transport
from gpux_devinfra.testing.cli import run as run_gpux

pytestmark = pytest.mark.unit

SECRET = "whsec_test_secret"


def event(n: int, type_: str = "order.filled") -> dict[str, Any]:
    return {
        "id": f"evt_{n}",
        "type": type_,
        "created_at": f"2026-01-01T00:00:0{n}Z",
        "account_id": "01ACC",
        "data": {"order_id": f"01ORDER{n}", "status": "open"},
    }


def sse(cursor: str, body: dict[str, Any]) -> str:
    return f"event: {body['type']}\nid: {cursor}\ndata: {json.dumps(body)}\n\n"


class Gateway:
    """Answers the stream: each connection gets the next batch of events, then ends."""

    def __init__(self, *batches: list[tuple[str, dict[str, Any]]], status: int = 200) -> None:
        self.batches = list(batches)
        self.status = status
        self.requests: list[httpx.Request] = []
        self.forwards: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/hook":
            self.forwards.append(request)
            return httpx.Response(204)
        self.requests.append(request)
        if self.status != 200:
            body = problem(self.status, "Unauthorized", "no key", "unauthorized")
            return httpx.Response(self.status, json=body)
        batch = self.batches.pop(0) if self.batches else []
        text = ": ping\nretry: 1\n\n" + "".join(sse(c, b) for c, b in batch)
        return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


@pytest.fixture
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "sleep", lambda _s: None)


Serve = Callable[[Gateway], Gateway]


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Serve:
    """Route the command's stream (through the SDK's client) and its forwards to a fake
    gateway; that gateway."""

    def route(gateway: Gateway) -> Gateway:
        use_transport(monkeypatch, gateway)
        transport = httpx.MockTransport(gateway)
        monkeypatch.setattr(
            cli_events, "make_forward_http", lambda: httpx.Client(transport=transport)
        )
        return gateway

    return route


def listen(*args: str) -> Any:
    return run_gpux("events", "listen", "--key", KEY, *args)


def test_it_prints_each_event_and_resumes_a_dropped_stream_after_the_last_id(
    serve: Serve, no_wait: None
) -> None:
    gateway = serve(Gateway([("7.1", event(1))], [("7.2", event(2)), ("8.1", event(3))]))
    result = listen("--max-events", "3", "--from-start")
    assert result.exit_code == 0, result.output
    assert line_with(result.output, "evt_1").startswith("2026-01-01T00:00:01Z order.filled open")
    assert "order_id=01ORDER1" in line_with(result.output, "evt_1")
    first, second = gateway.requests
    assert first.url.params["from"] == "start"
    assert "last-event-id" not in first.headers
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert second.headers["last-event-id"] == "7.1"
    assert "from" not in second.url.params
    assert "reconnecting" in result.output  # on stderr, which the runner mixes in


def test_only_the_types_asked_for_are_shown(serve: Serve, no_wait: None) -> None:
    batch = [("1.1", event(1)), ("1.2", event(2, "lease.ended")), ("1.3", event(3))]
    serve(Gateway(batch))
    result = listen("--types", "lease.ended, balance.updated", "--max-events", "1", "--json")
    assert result.exit_code == 0, result.output
    shown = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert [body["id"] for body in shown] == ["evt_2"]


def test_each_event_is_forwarded_signed_with_the_secret(serve: Serve, no_wait: None) -> None:
    gateway = serve(Gateway([("1.1", event(1)), ("1.2", event(2))]))
    result = listen("--forward", "http://127.0.0.1:9/hook", "--secret", SECRET, "--max-events", "2")
    assert result.exit_code == 0, result.output
    assert f"signed with {SECRET}" in result.output
    assert "-> http://127.0.0.1:9/hook: 204" in result.output
    assert [json.loads(f.content)["id"] for f in gateway.forwards] == ["evt_1", "evt_2"]
    for sent in gateway.forwards:
        verify(SECRET, sent.headers["gpux-signature"], sent.content, now=int(time.time()))
        assert sent.headers["gpux-event-id"] == json.loads(sent.content)["id"]
        assert sent.headers["content-type"] == "application/json"


def test_a_new_secret_is_made_and_printed_without_one(serve: Serve, no_wait: None) -> None:
    gateway = serve(Gateway([("1.1", event(1))]))
    result = listen("--forward", "http://127.0.0.1:9/hook", "--max-events", "1")
    assert result.exit_code == 0, result.output
    secret = line_with(result.output, "signed with").split("signed with ")[1].strip()
    assert secret.startswith("whsec_")
    assert len(secret) > 40
    sent = gateway.forwards[0]
    verify(secret, sent.headers["gpux-signature"], sent.content, now=int(time.time()))


def test_a_refused_stream_ends_the_command(serve: Serve) -> None:
    serve(Gateway(status=401))
    result = listen()
    assert result.exit_code == 1
    assert "401 Unauthorized: no key" in result.output


def test_the_command_needs_a_key() -> None:
    result = run_gpux("events", "listen", env={"GPUX_API_KEY": ""})
    assert result.exit_code == 1
    assert "needs an API key" in result.output


def parse(text: str) -> Iterator[SseEvent]:
    parser = SseParser()
    for line in text.split("\n"):
        if (found := parser.line(line)) is not None:
            yield found


def test_the_parser_reads_events_as_the_format_says() -> None:
    text = ": ping\nretry: 3000\n\nevent: a\nid: 1.1\ndata: x\ndata: y\n\ndata:z\n\nid: 2.2\n\n"
    assert list(parse(text)) == [SseEvent("a", "1.1", "x\ny"), SseEvent("message", "1.1", "z")]
    parser = SseParser()
    for line in text.split("\n"):
        parser.line(line)
    assert (parser.retry_ms, parser.comments, parser.last_id) == (3000, 1, "2.2")


def test_after_resumes_after_the_event_id_given(serve: Serve, no_wait: None) -> None:
    gateway = serve(Gateway([("7.2", event(2))]))
    result = listen("--after", "7.1", "--max-events", "1")
    assert result.exit_code == 0, result.output
    (first,) = gateway.requests
    assert first.headers["last-event-id"] == "7.1"
    assert "from" not in first.url.params
