"""`gpux leases [stop|interruption|reclaim ID]`, `gpux ledger`, `gpux earnings`: what trades
became."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpux_contracts.accounts import Role
from gpux_contracts.leases import LeaseStatus
from gpux_devinfra.cli_support import Caller, grouped_options
from gpux_devinfra.lease_tables import earnings_table, leases_table, ledger_table

leases_app = typer.Typer(help="Your leases: list them, stop one, watch for an interruption.")


@leases_app.callback(invoke_without_command=True)
@grouped_options
def leases_command(
    ctx: typer.Context,
    *,
    status: Annotated[
        LeaseStatus | None, typer.Option(help="Only running or only ended leases.")
    ] = None,
    role: Annotated[
        Role | None, typer.Option(help="As buyer or as seller (default: the API's).")
    ] = None,
    caller: Caller,
) -> None:
    """Your leases (GET /v1/leases): price, status, charged and cost so far."""
    if ctx.invoked_subcommand is not None:
        return
    wanted_status = status.value if status else None
    wanted_role = role.value if role else None
    caller.show(caller.ask(lambda client: client.leases(wanted_status, wanted_role)), leases_table)


def _stop_line(answer: dict[str, Any]) -> str:
    return f"lease {answer['lease_id']}: {answer['status']} at {answer['requested_at']}"


@leases_app.command("stop")
@grouped_options
def lease_stop(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """Stop a running lease (POST /v1/leases/ID/stop); billing ends it shortly after."""
    caller.show(caller.ask(lambda client: client.stop_lease(lease_id)), _stop_line)


def _interruption_line(lease_id: str, answer: dict[str, Any] | None) -> str:
    if answer is None:
        return f"lease {lease_id}: no interruption pending"
    return (
        f"lease {lease_id}: interrupted at {answer['interrupt_at']} ({answer['cause']},"
        f" {answer['seconds_left']} s left)"
    )


@leases_app.command("interruption")
@grouped_options
def lease_interruption(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """A pending interruption of the lease (GET /v1/leases/ID/interruption): when and why."""
    answer = caller.ask(lambda client: client.interruption(lease_id))
    caller.show(answer, lambda a: _interruption_line(lease_id, a))


@leases_app.command("reclaim")
@grouped_options
def lease_reclaim(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """Take an interruptible lease's GPUs back (POST /v1/leases/ID/reclaim, sellers): it is
    interrupted after the offer's notice and the GPUs leave the offer."""
    answer = caller.ask(lambda client: client.reclaim_lease(lease_id))
    caller.show(answer, lambda a: f"lease {a['lease_id']}: reclaim requested")


@grouped_options
def ledger_command(
    *,
    currency: Annotated[
        str | None, typer.Option(help="Only this currency, e.g. EUR.", show_default=False)
    ] = None,
    caller: Caller,
) -> None:
    """Your ledger entries (GET /v1/ledger): top-ups, holds, charges, payouts."""
    wanted = currency.strip().upper() if currency else None
    caller.show(caller.ask(lambda client: client.ledger(wanted)), ledger_table)


@grouped_options
def earnings_command(*, caller: Caller) -> None:
    """A seller's earnings per currency (GET /v1/accounts/me/earnings)."""
    caller.show(caller.ask(lambda client: client.earnings()), earnings_table)


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.add_typer(leases_app, name="leases")
    app.command("ledger")(ledger_command)
    app.command("earnings")(earnings_command)
