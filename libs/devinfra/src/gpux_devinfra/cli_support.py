"""What every `gpux` command that calls the API shares: options, the client, errors, output."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console, RenderableType

from gpux_devinfra.api_client import API_KEY_ENV, API_URL_ENV, DEFAULT_API_URL, ApiClient, ApiError

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
    """The options of every command that acts as an account: ``--key``, ``--api``, ``--json``."""

    key: ApiKey = None
    api: ApiUrl = DEFAULT_API_URL
    as_json: AsJson = False

    def ask(self, call: Callable[[ApiClient], T]) -> T:
        """Run one call as the account (exit 1 without a key, before anything is sent)."""
        return ask(self.api, call, need_key(self.key))

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
