"""The door of writes in front of routing: refusals answered at once, admitted writes counted
until answered, reads never stopped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from gpux_gateway.domain.backpressure import Capacity
from gpux_gateway.entrypoints.backpressure import WriteGate
from gpux_gateway.entrypoints.write_door import WriteDoor, is_write

pytestmark = pytest.mark.unit


class App:
    """The app behind the door: notes what reached it and the writes in flight meanwhile."""

    def __init__(self, gate: WriteGate) -> None:
        self.gate = gate
        self.reached: list[tuple[str, int]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.reached.append((scope["path"], self.gate.in_flight))
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


async def call(door: WriteDoor, method: str, path: str) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("the door reads no body")

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": "http", "method": method, "path": path, "headers": []}
    await door(scope, receive, send)
    return sent


def test_writes_of_orders_and_offers_pass_the_door_and_reads_do_not() -> None:
    assert is_write("POST", "/v1/orders")
    assert is_write("DELETE", "/v1/orders/o1")
    assert is_write("PATCH", "/v1/offers/f1")
    assert is_write("POST", "/v1/offers/bulk")
    assert not is_write("GET", "/v1/orders/o1")
    assert not is_write("POST", "/v1/topups")
    assert not is_write("POST", "/v1/offersfoo")


async def test_a_write_beyond_capacity_is_refused_before_the_app_and_a_read_still_passes() -> None:
    gate = WriteGate(Capacity(max_writes_in_flight=1, max_view_lag=100, retry_after_s=2))
    app = App(gate)
    door = WriteDoor(app, gate)
    assert (await call(door, "POST", "/v1/orders"))[0]["status"] == 202
    assert app.reached == [("/v1/orders", 1)]  # counted while under way
    assert gate.in_flight == 0  # and no longer once answered
    gate.in_flight = 1  # another write under way: the door is full
    start, body = await call(door, "PATCH", "/v1/offers/f1")
    assert start["status"] == 503
    assert (b"retry-after", b"2") in start["headers"]
    assert (b"content-type", b"application/problem+json") in start["headers"]
    problem = json.loads(body["body"])
    assert (problem["status"], problem["type"].rsplit("/", 1)[1]) == (503, "overloaded")
    assert problem["instance"] == "/v1/offers/f1"
    assert app.reached == [("/v1/orders", 1)]  # the refused write never reached the app
    assert (await call(door, "GET", "/v1/orders/o1"))[0]["status"] == 202
    assert gate.in_flight == 1
