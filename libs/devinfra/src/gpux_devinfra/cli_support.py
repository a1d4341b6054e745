"""What every `gpux` command that calls the API shares: options, the client, errors, JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from gpux_devinfra.api_client import API_KEY_ENV, API_URL_ENV, ApiClient, ApiError

T = TypeVar("T")

ApiUrl = Annotated[
    str, typer.Option("--api", envvar=API_URL_ENV, help="Base URL of the gpux gateway.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the API's JSON answer instead.")]
ApiKey = Annotated[
    str | None,
    typer.Option("--key", envvar=API_KEY_ENV, help="API key (gpx_...).", show_default=False),
]


def make_client(api: str) -> ApiClient:
    """The API client the commands use (tests replace it with one on a fake transport)."""
    return ApiClient(api)


def ask(api: str, call: Callable[[ApiClient], T], key: str | None = None) -> T:
    """Run one API call; an error ends the command with one line and exit code 1."""
    try:
        with make_client(api) as client:
            if key:
                client.authorize(key)
            return call(client)
    except ApiError as exc:
        typer.echo(f"gpux: {exc}", err=True)
        raise typer.Exit(1) from None


def need_key(key: str | None) -> str:
    """The API key, or exit 1 saying how to give one."""
    if not key:
        typer.echo(f"gpux: this command needs an API key: --key or {API_KEY_ENV}", err=True)
        raise typer.Exit(1)
    return key


def print_json(value: Any) -> None:
    """The API's answer as indented JSON on stdout."""
    print(json.dumps(value, indent=2, ensure_ascii=False))
