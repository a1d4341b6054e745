"""`gpux events listen [--types a,b] [--forward URL] [--secret S]`: follow the account's events
(GET /v1/stream/events) and, for local development, forward each one to a URL signed as the
gateway's webhooks are.

The stream is ``cli_streams.Stream`` on the account's SDK client (its key, base URL and the
tests' transport): a dropped connection (a network error, the gateway restarting, 45 s
without a byte although the gateway pings every 15 s) is opened again after the stream's
``retry:`` delay with ``Last-Event-ID`` set to the last event's id, so nothing is missed or
repeated. An answer that is not the stream (401, 400...) ends the command, code 1. Each
forwarded event is POSTed as the gateway's dispatcher sends it (the event's JSON,
``Gpux-Signature: t=…,v1=…`` with ``gpux_contracts.webhooks.sign`` and ``Gpux-Event-Id``); a
receiver that fails is reported and the next event goes on.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import httpx
import typer

from gpux_contracts.webhooks import EVENT_ID_HEADER, SIGNATURE_HEADER, sign
from gpux_devinfra.cli_streams import Stream, events_from_start, events_request
from gpux_devinfra.cli_support import Caller, grouped_options
from gpux_devinfra.sse import SseEvent
from gpux_sdk import AuthenticatedClient

events_app = typer.Typer(help="Your account's events: follow them, forward them to a local URL.")

FORWARD_TIMEOUT_S = 10.0
"""How long a forward may take (the gateway's webhooks wait as long)."""


def make_forward_http() -> httpx.Client:
    """The HTTP client forwards go through (tests replace it)."""
    return httpx.Client(timeout=FORWARD_TIMEOUT_S)


def new_secret() -> str:
    """A signing secret of the shape the gateway's webhook endpoints get."""
    return "whsec_" + secrets.token_urlsafe(32)


def wanted_types(types: str | None) -> frozenset[str] | None:
    """The ``--types`` list as a set (None: every type)."""
    if not types:
        return None
    return frozenset(t.strip() for t in types.split(",") if t.strip()) or None


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
    caller.credentials()  # exit 1 without a key, before anything is said or sent
    secret = options.secret or new_secret()
    if options.forward_to:
        typer.echo(f"forwarding to {options.forward_to}, signed with {secret}", err=True)
    request = events_from_start if options.from_start else events_request

    def follow(client: AuthenticatedClient) -> None:
        stream = Stream(client, request, last_id=options.after)
        with make_forward_http() as forward_http:
            events = stream.follow(lambda note: typer.echo(note, err=True))
            _run(events, forward_http, options, secret, as_json=caller.as_json)

    try:
        caller.ask(follow)  # a refused stream (StreamRefused) ends it: one line, exit 1
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _run(
    events: Iterable[SseEvent],
    forward_http: httpx.Client,
    options: ListenOptions,
    secret: str,
    *,
    as_json: bool,
) -> None:
    types = wanted_types(options.types)
    shown = 0
    for event in events:
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
