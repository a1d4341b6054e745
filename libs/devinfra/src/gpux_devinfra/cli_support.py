"""What every `gpux` command that calls the API shares: options, clients, errors, output.

A command calls the API through ``gpux_sdk``: it gets a client from ``ask`` (the public one)
or ``Caller.ask`` (an account's) and calls operations with ``sdk_client.call`` and
``sdk_client.pages``. Where it calls is resolved per option, first found wins:

- the gateway: ``--api``, then ``GPUX_API_URL``, then the profile's URL, then
  http://127.0.0.1:8000;
- the key: ``--key``, then ``GPUX_API_KEY``, then the profile's key (``gpux login``), but
  only when the gateway is the profile's own: a key saved for one gateway is never sent to
  another (as gh keeps a token per host), which then needs ``--key`` or ``GPUX_API_KEY``;
- the profile: ``--profile NAME``, then ``GPUX_PROFILE``, then ``default``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import httpx
import typer
from rich.console import Console, RenderableType

from gpux_devinfra import profiles
from gpux_devinfra.profiles import PROFILE_ENV, Profile, ProfileError
from gpux_devinfra.sdk_client import (
    API_KEY_ENV,
    API_URL_ENV,
    DEFAULT_API_URL,
    ApiError,
    account_client,
    call,
    public_client,
    usable_key,
    write_key,
)
from gpux_sdk import AuthenticatedClient, Client
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.problem import Problem
from gpux_sdk.types import Response

T = TypeVar("T")


def api_url_option(*names: str) -> Any:
    """The option (flags ``names``) that names the gateway, else ``GPUX_API_URL``."""
    return typer.Option(
        *names,
        envvar=API_URL_ENV,
        help=f"Base URL of the gpux gateway (default: the profile's, else {DEFAULT_API_URL}).",
        show_default=False,
    )


ApiUrl = Annotated[str | None, api_url_option("--api")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the API's JSON answer instead.")]
ApiKey = Annotated[
    str | None,
    typer.Option(
        "--key",
        envvar=API_KEY_ENV,
        help="API key (gpx_...; default: the profile's, sent only to the profile's gateway).",
        show_default=False,
    ),
]


def _idempotency_key(value: str | None) -> str | None:
    if value is not None and not usable_key(value):
        raise typer.BadParameter("1 to 255 visible ASCII characters")
    return value


IdempotencyKey = Annotated[
    str | None,
    typer.Option(
        "--idempotency-key",
        callback=_idempotency_key,
        help="Send a retry with the same key: it is answered as the first was, done once"
        " (default: a new key each time the command runs).",
        show_default=False,
    ),
]
ProfileName = Annotated[
    str | None,
    typer.Option(
        "--profile",
        envvar=PROFILE_ENV,
        help="The profile to use (`gpux login` saves one; default: default).",
        show_default=False,
    ),
]


def currency_code(value: str | None) -> str | None:
    """A currency code the API takes (``Currency``), upper-cased (a typer callback; None stays
    None); a usage error otherwise."""
    if value is None:
        return None
    code = value.strip().upper()
    if code not in Currency.__members__.values():
        known = ", ".join(c.value for c in Currency)
        raise typer.BadParameter(f"{value!r} is not one of the API's currencies ({known})")
    return code


def fail(message: object) -> typing.NoReturn:
    """End the command with ``gpux: <message>`` on stderr and exit code 1."""
    typer.echo(f"gpux: {message}", err=True)
    raise typer.Exit(1)


def saved_profile(name: str | None) -> Profile:
    """The profile ``name`` as saved (an empty one if never saved); exit 1 if unreadable."""
    try:
        return profiles.load(name)
    except ProfileError as exc:
        fail(exc)


def api_url(api: str | None, profile: str | None = None) -> str:
    """The gateway to call: ``api`` (``--api`` or ``GPUX_API_URL``), else the profile's URL,
    else the local gateway."""
    return api or saved_profile(profile).api or DEFAULT_API_URL


def same_gateway(left: str, right: str) -> bool:
    """Whether two URLs name the same gateway: scheme, host, port and path alike (a trailing
    slash, the letters' case and a scheme's default port aside)."""
    return _gateway(left) == _gateway(right)


def _gateway(url: str) -> tuple[str, ...]:
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL:
        return (url.strip().rstrip("/"),)
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return (parsed.scheme, parsed.host, str(port), parsed.path.rstrip("/"))


def ask(api: str | None, call: Callable[[Client], T], profile: str | None = None) -> T:
    """Run ``call`` with a public client of the gateway (``api_url``); an ``ApiError`` ends the
    command with one line and exit code 1."""
    try:
        with public_client(api_url(api, profile)) as client:
            return call(client)
    except ApiError as exc:
        fail(exc)


def need_key(key: str | None, url: str, profile: str | None = None) -> str:
    """The API key to send to the gateway at ``url``: ``key`` (``--key`` or ``GPUX_API_KEY``),
    else the profile's when ``url`` is the profile's own gateway (its URL; the local gateway
    if it saved none); else exit 1 saying how to give one."""
    if key:
        return key
    saved = saved_profile(profile)
    if saved.key is None:
        fail(f"this command needs an API key: `gpux login`, --key or {API_KEY_ENV}")
    own = saved.api or DEFAULT_API_URL
    if not same_gateway(url, own):
        name = profiles.selected(profile)
        fail(
            f"profile {name!r} holds a key for {own}, not for {url}: give --key or"
            f" {API_KEY_ENV} (or `gpux login --api {url}`)"
        )
    return saved.key


def jsonable(value: Any) -> Any:
    """``value`` as JSON values: an SDK model by its ``to_dict()``, lists item by item."""
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def stamp(value: datetime | None) -> str:
    """An instant as the API writes it: RFC 3339 in UTC with ``Z`` (a dash for none)."""
    if value is None:
        return "—"
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def print_json(value: Any) -> None:
    """The API's answer (SDK models as their JSON) as indented JSON on stdout."""
    print(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def show(answer: T, as_json: bool, render: Callable[[T], RenderableType]) -> None:
    """Print the API's answer as JSON (``--json``) or as ``render`` makes it for people: a
    table through rich, a plain line as it is."""
    if as_json:
        print_json(answer)
        return
    shown = render(answer)
    if isinstance(shown, str):
        print(shown)
    else:
        Console().print(shown)


@dataclasses.dataclass(frozen=True)
class Caller:
    """The options of every command that acts as an account: ``--key``, ``--api``,
    ``--profile``, ``--json``."""

    key: ApiKey = None
    api: ApiUrl = None
    profile: ProfileName = None
    as_json: AsJson = False

    @property
    def url(self) -> str:
        """The gateway this command calls (see the module docstring)."""
        return api_url(self.api, self.profile)

    def credentials(self) -> str:
        """The API key this command sends to its gateway; exit 1 without one."""
        return need_key(self.key, self.url, self.profile)

    def client(self) -> AuthenticatedClient:
        """An SDK client acting as the account (exit 1 without a key, before anything is sent)."""
        key = self.credentials()
        return account_client(self.url, key)

    def ask(self, call: Callable[[AuthenticatedClient], T]) -> T:
        """Run ``call`` with the account's client; an ``ApiError`` ends the command with one
        line and exit code 1."""
        try:
            with self.client() as client:
                return call(client)
        except ApiError as exc:
            fail(self.why(exc))

    def why(self, exc: ApiError) -> str:
        """The line that ends the command after ``exc``."""
        return str(exc)

    def show(self, answer: T, render: Callable[[T], RenderableType]) -> None:
        """``show`` with this command's ``--json``."""
        show(answer, self.as_json, render)


@dataclasses.dataclass(frozen=True)
class Writer(Caller):
    """The options of a command whose write is a new act each time it runs (an order, an
    offer, a top-up, a key, a payout): ``Caller``'s and ``--idempotency-key``, the caller's
    key to send a retry of a run whose outcome it does not know."""

    idempotency_key: IdempotencyKey = None

    def write_key(self) -> str:
        """The Idempotency-Key to send: the one given, else a fresh one."""
        return self.idempotency_key or write_key()

    def send(self, operation: Callable[..., Response[T | Problem]], body: Any) -> T:
        """The write ``operation`` of ``body`` under this run's Idempotency-Key (its retries
        too), as the account; its parsed answer (an error ends the command)."""
        key = self.write_key()
        return self.ask(lambda client: call(operation, client, body=body, idempotency_key=key))

    def why(self, exc: ApiError) -> str:
        """The error's line, and how to send the write again where that could succeed."""
        if exc.idempotency_key is None:
            return str(exc)
        key = exc.idempotency_key
        return f"{exc}; run it again with --idempotency-key {key}: it is done at most once"


@dataclasses.dataclass(frozen=True)
class Public:
    """The options of a command anyone may run: ``--api``, ``--profile``, ``--json``."""

    api: ApiUrl = None
    profile: ProfileName = None
    as_json: AsJson = False

    @property
    def url(self) -> str:
        """The gateway this command calls."""
        return api_url(self.api, self.profile)

    def ask(self, call: Callable[[Client], T]) -> T:
        """Run ``call`` with a public client; an ``ApiError`` ends the command (exit 1)."""
        return ask(self.url, call)

    def show(self, answer: T, render: Callable[[T], RenderableType]) -> None:
        """``show`` with this command's ``--json``."""
        show(answer, self.as_json, render)


def grouped_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` as typer should see it: a parameter typed as a dataclass (``Caller``, or a
    group of a command's own options) stands for that dataclass's fields, each an option of
    its own; the command receives the dataclass built from them."""
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, type[Any]] = {
        name: parameter.annotation
        for name, parameter in signature.parameters.items()
        if isinstance(parameter.annotation, type) and dataclasses.is_dataclass(parameter.annotation)
    }
    flat: list[inspect.Parameter] = []
    for name, parameter in signature.parameters.items():
        if name not in groups:
            flat.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        hints = typing.get_type_hints(groups[name], include_extras=True)
        flat += [
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=field.default,
                annotation=hints[field.name],
            )
            for field in dataclasses.fields(groups[name])
        ]

    def run(**values: Any) -> None:
        for name, group in groups.items():
            values[name] = group(**{f.name: values.pop(f.name) for f in dataclasses.fields(group)})
        command(**values)

    # What inspect.signature (and so typer) reads: the flat options, in the command's order.
    wrapper: Any = functools.wraps(command)(run)
    wrapper.__signature__ = signature.replace(parameters=flat)
    return run
