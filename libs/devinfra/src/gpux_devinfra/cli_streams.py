"""The API's server-sent event streams, read through the SDK's clients: prices for
`gpux prices --watch`, the account's events for `gpux order buy --wait` and `gpux events
listen`.

``gpux_sdk`` knows each stream's request (its operation's path, query and ``Last-Event-ID``
header) but reads a whole body at once, so the body is read here, line by line with httpx on
the SDK client's own connection (its base URL, key and the tests' transport), and parsed by
``gpux_devinfra.sse``. A connection silent for ``SILENCE_S`` (the gateway pings every 15 s)
is taken as dead; ``follow`` opens a new one after the stream's ``retry:`` delay with
``Last-Event-ID`` set to the last id, so nothing is missed or repeated.

A stream counts as open at its first line, not at its answer's headers: the gateway sends
those before its stream has chosen where it starts, and the first line after (so what a
caller reads once the stream is open, the stream does not miss).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from gpux_devinfra.sdk_client import ApiError, problem_line
from gpux_devinfra.sse import SseEvent, SseParser
from gpux_sdk import AuthenticatedClient, Client
from gpux_sdk.api.market_data import stream_prices
from gpux_sdk.api.notifications import stream_account_events
from gpux_sdk.models.stream_account_events_from import StreamAccountEventsFrom
from gpux_sdk.types import UNSET, Unset

SILENCE_S = 45.0
"""How long a stream may be silent before its connection is taken as dead (3 pings)."""
CONNECT_S = 10.0
RETRY_S = 3.0
"""How long to wait before reconnecting, unless the stream said (``retry:``)."""

OPENED = None
"""What ``Stream.items`` yields for a line that completes no event: first for the stream's
first line (so a caller can catch up on what came before it), then for each ping or field
line (so a caller can look at its clock while the stream is quiet)."""


class StreamRefused(ApiError):
    """The gateway answered a stream's request with an error instead of the stream."""


def _last(last_id: str | None) -> str | Unset:
    return last_id if last_id else UNSET


def price_request(last_id: str | None) -> dict[str, Any]:
    """GET /v1/stream/prices, resuming after ``last_id`` when given (the SDK's request)."""
    return stream_prices._get_kwargs(last_event_id=_last(last_id))


def events_request(last_id: str | None) -> dict[str, Any]:
    """GET /v1/stream/events from now, or resuming after ``last_id`` (the SDK's request)."""
    return stream_account_events._get_kwargs(last_event_id=_last(last_id), from_=UNSET)


def events_from_start(last_id: str | None) -> dict[str, Any]:
    """GET /v1/stream/events from the oldest event kept, or resuming after ``last_id``."""
    if last_id:
        return events_request(last_id)
    return stream_account_events._get_kwargs(from_=StreamAccountEventsFrom.START)


@dataclass
class Stream:
    """One stream of the API: how to ask for it, the last id read and the retry delay."""

    client: Client | AuthenticatedClient
    request: Callable[[str | None], dict[str, Any]]
    last_id: str | None = None
    retry_s: float = RETRY_S
    silence_s: float = SILENCE_S
    _parser: SseParser = field(default_factory=SseParser)

    def items(self, silence_s: float | None = None) -> Iterator[SseEvent | None]:
        """One connection's events, and ``OPENED`` for every line that completes none, until
        the connection ends; ``StreamRefused`` when the answer is no stream, an
        ``httpx.HTTPError`` when the connection fails or is silent for ``silence_s``."""
        read_s = self.silence_s if silence_s is None else silence_s
        timeout = httpx.Timeout(CONNECT_S, read=max(read_s, 0.001))
        self._parser = SseParser(last_id=self.last_id)
        http = self.client.get_httpx_client()
        request = self.request(self.last_id)
        request["headers"] = {**request.get("headers", {}), "Accept": "text/event-stream"}
        with http.stream(**request, timeout=timeout) as response:
            if response.status_code != httpx.codes.OK:
                response.read()
                line = problem_line(response.status_code, response.content, response.reason_phrase)
                raise StreamRefused(line, response.status_code)
            for line in response.iter_lines():
                event = self._parser.line(line)
                if self._parser.retry_ms is not None:
                    self.retry_s = self._parser.retry_ms / 1000
                if event is not None:
                    self.last_id = event.id
                yield event

    def follow(
        self, note: Callable[[str], None], opened: Callable[[], None] | None = None
    ) -> Iterator[SseEvent]:
        """Every event, reconnecting after each dropped connection, until the caller stops;
        a refused stream (``StreamRefused``) ends it. ``opened`` is called once, when the
        first connection is open (before its first event)."""
        while True:
            try:
                for item in self.items():
                    if item is not None:
                        yield item
                    elif opened is not None:
                        first, opened = opened, None
                        first()
                note("the stream ended; reconnecting")
            except httpx.HTTPError as exc:
                note(f"the stream dropped ({type(exc).__name__}); reconnecting")
            time.sleep(self.retry_s)
