"""Run ``gpux`` commands against a fake gateway, for the CLI's presentation tests, or against
the real services in the tests' event loop (``run_in_thread``).

``FakeGateway`` is an ``httpx.MockTransport`` handler: it records every request and answers
from a table of routes, or with one problem document when a test sets ``problem``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from typer.testing import CliRunner, Result

from gpux_devinfra import cli, sdk_client
from gpux_devinfra.profiles import CONFIG_HOME_ENV, PROFILE_ENV
from gpux_devinfra.sdk_client import API_KEY_ENV, API_URL_ENV

Handler = Callable[[httpx.Request], httpx.Response]
Route = tuple[str, str]
"""``(method, path)``."""

KEY = "gpx_01KEY_secret"
"""An API key of the shape the gateway hands out."""


def not_found(request: httpx.Request) -> httpx.Response:
    """The gateway's answer to a route it does not have."""
    return httpx.Response(404, json={"title": "Not found", "status": 404, "detail": "no"})


class FakeGateway:
    """Answers ``routes`` (``(method, path)`` to a handler), anything else 404; records every
    request; answers ``problem`` instead, while a test sets one."""

    def __init__(self, routes: Mapping[Route, Handler]) -> None:
        self.routes = dict(routes)
        self.requests: list[httpx.Request] = []
        self.problem: dict[str, Any] | None = None

    @property
    def last(self) -> httpx.Request:
        """The latest request."""
        return self.requests[-1]

    def sent(self) -> tuple[str, str, str | None]:
        """The latest request's method, path and ``Authorization`` header."""
        return self.last.method, self.last.url.path, self.last.headers.get("authorization")

    def body(self) -> Any:
        """The latest request's JSON body."""
        return json.loads(self.last.content)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.problem is not None:
            return httpx.Response(
                self.problem["status"],
                json=self.problem,
                headers={"content-type": "application/problem+json"},
            )
        return self.routes.get((request.method, request.url.path), not_found)(request)


def problem(status: int, title: str, detail: str, kind: str) -> dict[str, Any]:
    """A problem document as the gateway answers it (its type ends in ``kind``)."""
    return {
        "type": f"https://gpux.dev/problems/{kind}",
        "title": title,
        "status": status,
        "detail": detail,
    }


def answer(status: int, body: Any) -> Handler:
    """A handler that always answers ``body`` with ``status``."""
    return lambda _: httpx.Response(status, json=body)


def use_transport(monkeypatch: pytest.MonkeyPatch, handler: Handler) -> None:
    """Make every ``gpux`` command talk to ``handler`` instead of a gateway (every client
    ``sdk_client`` makes uses this transport)."""
    monkeypatch.setattr(sdk_client, "transport", httpx.MockTransport(handler))


def isolate_profiles(monkeypatch: pytest.MonkeyPatch, config_home: Path) -> Path:
    """Keep ``gpux`` off the developer's own settings: profiles under ``config_home`` (none
    saved yet), no key, URL or profile from the environment. Returns the config file's path."""
    monkeypatch.setenv(CONFIG_HOME_ENV, str(config_home))
    for name in (API_KEY_ENV, API_URL_ENV, PROFILE_ENV):
        monkeypatch.delenv(name, raising=False)
    return config_home / "gpux" / "config.toml"


def run(
    *args: str,
    env: Mapping[str, str] | None = None,
    columns: int = 200,
    stdin: str | None = None,
    app: typer.Typer | None = None,
) -> Result:
    """``gpux ARGS`` (or ``app``'s) on a terminal ``columns`` wide without colours, ``stdin``
    typed in; its result."""
    wide = {"COLUMNS": str(columns), "NO_COLOR": "1"}
    return CliRunner().invoke(app or cli.app, list(args), input=stdin, env={**wide, **(env or {})})


async def run_in_thread(
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout_s: float = 120,
) -> Result:
    """``run`` in a worker thread, off the event loop the services under test run on (the
    command calls them over HTTP and waits); at most ``timeout_s``."""
    return await asyncio.wait_for(
        asyncio.to_thread(run, *args, env=env, stdin=stdin), timeout=timeout_s
    )


def line_with(output: str, text: str) -> str:
    """The first line of ``output`` that holds ``text``."""
    return next(line for line in output.splitlines() if text in line)
