"""`gpux demo load|board`: the demo data set and the live best-ask board, for any gateway."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpux_devinfra.cli_support import AsJson, api_url, api_url_option, print_json
from gpux_devinfra.demo.board import show_live
from gpux_devinfra.demo.loader import DemoError, load_demo
from gpux_devinfra.sdk_client import ApiError, call, public_client
from gpux_devinfra.system import console, state_dir
from gpux_sdk.api.catalog import list_gpus

demo_app = typer.Typer(help="The demo market: load it, watch it.", no_args_is_help=True)

DemoUrl = Annotated[str | None, api_url_option("--url", "--api")]
KeysFile = Annotated[
    Path | None,
    typer.Option(
        help="Where the demo keys are kept (default: .gpux/demo-keys.json).", show_default=False
    ),
]


@demo_app.command("load")
def demo_load(
    url: DemoUrl = None,
    keys_file: KeysFile = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds to wait per step.")] = 90,
    as_json: AsJson = False,
) -> None:
    """Load the demo sellers, offers and funded buyer (idempotent); print the keys."""
    path = keys_file or state_dir() / "demo-keys.json"
    try:
        with console.status("loading the demo data set") as status:
            result = load_demo(
                api_url(url),
                keys_file=path,
                timeout_s=timeout,
                progress=lambda step: status.update(f"loading the demo data set: {step}"),
            )
    except (DemoError, ApiError) as exc:
        typer.echo(f"gpux: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        keys = {a.handle: {"role": a.role, "api_key": a.api_key} for a in result.accounts}
        print_json({"keys_file": str(path), "accounts": keys, "topups": result.topups})
        return
    print(f"demo loaded into {result.url}: {result.offers_pushed} offers pushed, ", end="")
    print(f"{result.offers_live} live, credit {', '.join(result.topups) or 'already there'}")
    for account in result.accounts:
        print(f"  {account.role:<6} {account.name:<26} {account.api_key}")
    print(f"keys saved in {path}")


@demo_app.command("board")
def demo_board(url: DemoUrl = None) -> None:
    """The live best-ask table (snapshot, then the SSE stream) until Ctrl-C."""
    gateway = api_url(url)
    try:
        with public_client(gateway) as client:
            gpus = call(list_gpus.sync_detailed, client).items
    except ApiError as exc:
        typer.echo(f"gpux: {exc}", err=True)
        raise typer.Exit(1) from None
    try:
        show_live(gateway, gpus, Console())
    except KeyboardInterrupt:
        return


def register(app: typer.Typer) -> None:
    """Add `gpux demo` to the `gpux` app."""
    app.add_typer(demo_app, name="demo")
