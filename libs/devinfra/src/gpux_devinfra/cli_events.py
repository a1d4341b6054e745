"""`gpux events listen [--types a,b] [--forward URL] [--secret S]`: follow the account's events
(GET /v1/stream/events) and, for local development, forward each one to a URL signed as the
gateway's webhooks are.

The stream is read with httpx; a dropped connection (a network error, the gateway restarting,
45 s without a byte although the gateway pings every 15 s) is opened again after the
stream's ``retry:`` delay with ``Last-Event-ID`` set to the last event's id, so nothing is
missed or repeated. An answer that is not the stream (401, 400...) ends the command, code 1.
Each forwarded event is POSTed as the gateway's dispatcher sends it (the event's JSON,
``Gpux-Signature: t=…,v1=…`` with ``gpux_contracts.webhooks.sign`` and ``Gpux-Event-Id``);
a receiver that fails is reported and the next event goes on.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import httpx
import typer

from gpux_contracts.webhooks import EVENT_ID_HEADER, SIGNATURE_HEADER, sign
from gpux_devinfra.api_client import problem_line
from gpux_devinfra.cli_support import Caller, grouped_options, need_key
from gpux_devinfra.sse import SseEvent, SseParser

events_app = typer.Typer(help="Your account's events: follow them, forward them to a local URL.")

STREAM_PATH = "/v1/stream/events"
SILENCE_S = 45.0
"""How long the stream may be silent before the connection is taken as dead (3 pings)."""
RETRY_S = 3.0
"""How long to wait before reconnecting, unless the stream said (``retry:``)."""
FORWARD_TIMEOUT_S = 10.0
"""How long a forward may take (the gateway's webhooks wait as long)."""


class StreamRefused(Exception):
    """The gateway answered the stream's request with an error (not worth retrying)."""


def make_http(api: str, timeout: httpx.Timeout) -> httpx.Client:
    """The HTTP client the command uses (tests replace it with one on a fake transport)."""
    return httpx.Client(base_url=api.rstrip("/"), timeout=timeout)


def make_forward_http() -> httpx.Client:
    """The HTTP client forwards go through (tests replace it too)."""
    return httpx.Client(timeout=FORWARD_TIMEOUT_S)


def new_secret() -> str:
    """A signing secret of the shape the gateway's webhook endpoints get."""
    return "whsec_" + secrets.token_urlsafe(32)


def wanted_types(types: str | None) -> frozenset[str] | None:
    """The ``--types`` list as a set (None: every type)."""
    if not types:
        return None
    return frozenset(t.strip() for t in types.split(",") if t.strip()) or None


@dataclass
class Follower:
    """Where the stream is: the last id seen and how long to wait before reconnecting."""

    api: str
    key: str
    last_id: str | None = None
    start: str | None = None
    """``?from=start`` without a cursor."""
    retry_s: float = RETRY_S

    def events(self, http: httpx.Client) -> Iterator[SseEvent]:
        """The events of one connection, until it ends (``StreamRefused`` if refused)."""
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "text/event-stream"}
        params: dict[str, str] = {}
        if self.last_id:
            headers["Last-Event-ID"] = self.last_id
        elif self.start:
            params["from"] = self.start
        parser = SseParser(last_id=self.last_id)
        with http.stream("GET", STREAM_PATH, headers=headers, params=params) as response:
            if response.status_code != 200:
                response.read()
                raise StreamRefused(problem_line(response))
            for line in response.iter_lines():
                event = parser.line(line)
                if parser.retry_ms is not None:
                    self.retry_s = parser.retry_ms / 1000
                if event is not None:
                    self.last_id = event.id
                    yield event

    def follow(self, http: httpx.Client, note: Callable[[str], None]) -> Iterator[SseEvent]:
        """Every event, reconnecting after each dropped connection, until the caller stops."""
        while True:
            try:
                yield from self.events(http)
                note("the stream ended; reconnecting")
            except httpx.HTTPError as exc:
                note(f"the stream dropped ({type(exc).__name__}); reconnecting")
            time.sleep(self.retry_s)


def forward(http: httpx.Client, url: str, secret: str, event: SseEvent) -> str:
    """POST the event to ``url`` signed with ``secret``; what became of it, as one line."""
    body = event.data.encode()
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign(secret, body, int(time.time())),
        EVENT_ID_HEADER: json.loads(event.data).get("id", ""),
    }
    try:
        response = http.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return f"  -> {url}: not delivered ({type(exc).__name__}: {exc})"
    return f"  -> {url}: {response.status_code}"


def event_line(event: SseEvent) -> str:
    """One event for people: when, type, id and the data's ids."""
    body: dict[str, Any] = json.loads(event.data)
    data = body.get("data") or {}
    ids = " ".join(f"{k}={v}" for k, v in data.items() if k.endswith("_id") and v)
    status = f" {data['status']}" if isinstance(data.get("status"), str) else ""
    return f"{body.get('created_at')} {body.get('type')}{status} {body.get('id')} {ids}".rstrip()


@dataclass(frozen=True)
class ListenOptions:
    """What `gpux events listen` follows and where it forwards."""

    types: Annotated[
        str | None,
        typer.Option(help="Only these types, comma-separated (e.g. order.filled,lease.ended)."),
    ] = None
    forward_to: Annotated[
        str | None,
        typer.Option("--forward", help="POST each event to this URL, signed as webhooks are."),
    ] = None
    secret: Annotated[
        str | None,
        typer.Option(help="The signing secret of forwards (default: a new one, printed)."),
    ] = None
    after: Annotated[
        str | None, typer.Option(help="Start after this event id (`<txid>.<seq>`).")
    ] = None
    from_start: Annotated[
        bool, typer.Option("--from-start", help="Without --after: from the oldest event kept.")
    ] = False
    max_events: Annotated[
        int | None, typer.Option(help="Stop after this many events (shown ones).", min=1)
    ] = None


@events_app.command("listen")
@grouped_options
def listen_command(*, options: ListenOptions, caller: Caller) -> None:
    """Follow your account's events (GET /v1/stream/events) and print each; with --forward,
    POST each to a local URL signed with a secret printed at the start."""
    key = need_key(caller.key)
    secret = options.secret or new_secret()
    if options.forward_to:
        typer.echo(f"forwarding to {options.forward_to}, signed with {secret}", err=True)
    follower = Follower(
        caller.api, key, last_id=options.after, start="start" if options.from_start else None
    )
    timeout = httpx.Timeout(10.0, read=SILENCE_S)
    with (
        make_http(caller.api, timeout) as stream_http,
        make_forward_http() as forward_http,
    ):
        try:
            _run(
                follower,
                stream_http=stream_http,
                forward_http=forward_http,
                options=options,
                secret=secret,
                as_json=caller.as_json,
            )
        except StreamRefused as exc:
            typer.echo(f"gpux: {exc}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            raise typer.Exit(0) from None


def _run(
    follower: Follower,
    *,
    stream_http: httpx.Client,
    forward_http: httpx.Client,
    options: ListenOptions,
    secret: str,
    as_json: bool,
) -> None:
    types = wanted_types(options.types)
    shown = 0
    for event in follower.follow(stream_http, lambda note: typer.echo(note, err=True)):
        if types is not None and event.event not in types:
            continue
        print(event.data if as_json else event_line(event), flush=True)
        if options.forward_to:
            outcome = forward(forward_http, options.forward_to, secret, event)
            typer.echo(outcome, err=as_json)  # --json keeps stdout to the events
        shown += 1
        if options.max_events is not None and shown >= options.max_events:
            return


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.add_typer(events_app, name="events")
