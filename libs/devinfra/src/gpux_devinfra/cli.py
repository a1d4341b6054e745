"""The ``gpux`` command: local infrastructure now; the market commands join it as they land."""

from __future__ import annotations

import typer
from rich.table import Table

from gpux_devinfra import infra
from gpux_devinfra.system import InfraError, console

app = typer.Typer(help="gpux: an open exchange for GPU-hours.", no_args_is_help=True)
infra_app = typer.Typer(help="Local Kafka, PostgreSQL and Redis on loopback.", no_args_is_help=True)
app.add_typer(infra_app, name="infra")


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


def main() -> None:
    """Console-script entry point."""
    app()
