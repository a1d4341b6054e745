"""`gpux events listen --forward` against a real gateway and a real local receiver: each of
the account's events arrives as the stream sent it, signed so that the receiver's
``gpux_contracts.webhooks.verify`` accepts it."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gpux_contracts.ids import new_id
from gpux_contracts.webhooks import verify
from gpux_devinfra.testing.cli import run as run_gpux
from gpux_devinfra.testing.database import migrated_pool
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_platform.clock import SystemClock

from .conftest import RunningGateway, SignUp

pytestmark = pytest.mark.integration

SECRET = "whsec_forward_test"


class Receiver(BaseHTTPRequestHandler):
    """Keeps each POST (its headers and body) and answers 204."""

    received: list[tuple[dict[str, str], bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        """Quiet."""


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    received: list[tuple[dict[str, str], bytes]] = []
    handler = type("Handler", (Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


async def test_each_event_is_forwarded_signed_to_a_local_receiver(
    gateway: RunningGateway,
    sign_up: SignUp,
    receiver: tuple[str, list[tuple[dict[str, str], bytes]]],
) -> None:
    url, received = receiver
    alice = await sign_up(["buyer"])
    events = [
        AccountEvent.of(new_id(), alice["id"], type_, {"n": n}, datetime.now(UTC))
        for n, type_ in enumerate((AccountEventType.ORDER_FILLED, AccountEventType.LEASE_ENDED))
    ]
    async with (
        migrated_pool(gateway.settings, max_size=1) as pool,
        PostgresGatewayUnitOfWork(pool, SystemClock()) as uow,
    ):
        await uow.account_events.record(*events)
        await uow.commit()
    args = ["events", "listen", "--api", gateway.url, "--key", alice["key"]]
    args += ["--forward", url, "--secret", SECRET, "--from-start", "--max-events", "2"]
    result = await asyncio.wait_for(asyncio.to_thread(run_gpux, *args), timeout=60)
    assert result.exit_code == 0, result.output
    assert result.output.count(f"-> {url}: 204") == 2
    assert [json.loads(body) for _, body in received] == [e.public() for e in events]
    for headers, body in received:
        verify(SECRET, headers["gpux-signature"], body, now=int(time.time()))
        assert headers["gpux-event-id"] == json.loads(body)["id"]
