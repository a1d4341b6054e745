"""The ``gpux`` command: local infrastructure, and the exchange as its gateway serves it.

Every command that calls the API does so through the generated SDK (``gpux_sdk``); the
commands live by subject (``cli_catalog``, ``cli_market``, ``cli_leases``...) and register
themselves here. ``--locale`` (or ``GPUX_LOCALE``) chooses how amounts are written.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from gpux_devinfra import (
    cli_account,
    cli_catalog,
    cli_demo,
    cli_events,
    cli_leases,
    cli_market,
    cli_payouts,
    infra,
)
from gpux_devinfra.amounts import DEFAULT_LOCALE, LOCALE_ENV, BadLocale, use_locale
from gpux_devinfra.system import InfraError, console

app = typer.Typer(help="gpux: an open exchange for GPU-hours.", no_args_is_help=True)
infra_app = typer.Typer(help="Local Kafka, PostgreSQL and Redis on loopback.", no_args_is_help=True)
app.add_typer(infra_app, name="infra")


@app.callback()
def options(
    locale: Annotated[
        str,
        typer.Option(
            "--locale",
            envvar=LOCALE_ENV,
            help="How amounts are written: a locale such as en_US, de_DE or fr_FR.",
        ),
    ] = DEFAULT_LOCALE,
) -> None:
    """gpux: an open exchange for GPU-hours."""
    try:
        use_locale(locale)
    except BadLocale as exc:
        raise typer.BadParameter(str(exc), param_hint="--locale") from None


@infra_app.command("up")
def infra_up() -> None:
    """Start (or reuse) Kafka, PostgreSQL and Redis; print their endpoints."""
    try:
        endpoints = infra.up()
    except InfraError as exc:
        console.print(f"[red]infra up failed:[/] {exc}")
        raise typer.Exit(1) from None
    table = Table(title="gpux local infrastructure", show_header=True)
    table.add_column("variable")
    table.add_column("value")
    for key, value in endpoints.env().items():
        table.add_row(key, value)
    console.print(table)


@infra_app.command("status")
def infra_status() -> None:
    """Show whether each local service runs and answers (exit 1 if any does not)."""
    rows = infra.status()
    table = Table(title="gpux local infrastructure")
    for column in ("service", "pid", "answers", "endpoint"):
        table.add_column(column)
    for row in rows:
        ok = "[green]yes[/]" if row.answers else "[red]no[/]"
        table.add_row(row.name, str(row.pid or "-"), ok, row.endpoint)
    console.print(table)
    if not all(row.answers and row.pid for row in rows):
        raise typer.Exit(1)


@infra_app.command("down")
def infra_down() -> None:
    """Stop what `gpux infra up` started (by pid file); nothing else is touched."""
    stopped = infra.down()
    console.print(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


@infra_app.command("env")
def infra_env() -> None:
    """Print the endpoints as shell exports (after `up`)."""
    for key, value in infra.up().env().items():
        print(f"export {key}={value}")


cli_account.register(app)
cli_catalog.register(app)
cli_market.register(app)
cli_leases.register(app)
cli_payouts.register(app)
cli_events.register(app)
cli_demo.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
