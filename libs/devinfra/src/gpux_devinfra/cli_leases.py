"""`gpux leases [stop ID]`, `gpux ledger`, `gpux earnings`: what trades became."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console

from gpux_devinfra.api_client import DEFAULT_API_URL
from gpux_devinfra.cli_support import ApiKey, ApiUrl, AsJson, ask, need_key, print_json
from gpux_devinfra.lease_tables import earnings_table, leases_table, ledger_table

leases_app = typer.Typer(help="Your leases: list them, stop one.")


class LeaseStatus(StrEnum):
    """Which leases to list."""

    RUNNING = "running"
    ENDED = "ended"


class LeaseRole(StrEnum):
    """List the leases you buy or the ones you sell."""

    BUYER = "buyer"
    SELLER = "seller"


@leases_app.callback(invoke_without_command=True)
def leases_command(
    ctx: typer.Context,
    status: Annotated[
        LeaseStatus | None, typer.Option(help="Only running or only ended leases.")
    ] = None,
    role: Annotated[
        LeaseRole | None, typer.Option(help="As buyer or as seller (default: the API's).")
    ] = None,
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Your leases (GET /v1/leases): price, status, charged and cost so far."""
    if ctx.invoked_subcommand is not None:
        return
    wanted_status = status.value if status else None
    wanted_role = role.value if role else None
    leases = ask(api, lambda client: client.leases(wanted_status, wanted_role), need_key(key))
    if as_json:
        print_json(leases)
        return
    Console().print(leases_table(leases))


@leases_app.command("stop")
def lease_stop(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Stop a running lease (POST /v1/leases/ID/stop); billing ends it shortly after."""
    answer = ask(api, lambda client: client.stop_lease(lease_id), need_key(key))
    if as_json:
        print_json(answer)
        return
    print(f"lease {answer['lease_id']}: {answer['status']} at {answer['requested_at']}")


def ledger_command(
    currency: Annotated[
        str | None, typer.Option(help="Only this currency, e.g. EUR.", show_default=False)
    ] = None,
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Your ledger entries (GET /v1/ledger): top-ups, holds, charges, payouts."""
    wanted = currency.strip().upper() if currency else None
    entries = ask(api, lambda client: client.ledger(wanted), need_key(key))
    if as_json:
        print_json(entries)
        return
    Console().print(ledger_table(entries))


def earnings_command(
    key: ApiKey = None, api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False
) -> None:
    """A seller's earnings per currency (GET /v1/accounts/me/earnings)."""
    items = ask(api, lambda client: client.earnings(), need_key(key))
    if as_json:
        print_json(items)
        return
    Console().print(earnings_table(items))


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.add_typer(leases_app, name="leases")
    app.command("ledger")(ledger_command)
    app.command("earnings")(earnings_command)
