"""`gpux leases [stop|interruption|reclaim ID]`, `gpux ledger`, `gpux earnings`: what trades
became."""

from __future__ import annotations

from typing import Annotated

import typer

from gpux_devinfra.cli_support import Caller, currency_code, grouped_options, stamp
from gpux_devinfra.lease_tables import earnings_table, leases_table, ledger_table
from gpux_devinfra.sdk_client import ApiError, call, pages, write_key
from gpux_sdk import AuthenticatedClient
from gpux_sdk.api.leases import (
    get_lease_interruption,
    list_earnings,
    list_leases,
    list_ledger_entries,
    reclaim_lease,
    stop_lease,
)
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.earnings_out import EarningsOut
from gpux_sdk.models.interruption_out import InterruptionOut
from gpux_sdk.models.lease_role import LeaseRole
from gpux_sdk.models.lease_status import LeaseStatus
from gpux_sdk.models.stop_accepted import StopAccepted
from gpux_sdk.types import UNSET

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
        LeaseRole | None, typer.Option(help="As buyer or as seller (default: the API's).")
    ] = None,
    caller: Caller,
) -> None:
    """Your leases (GET /v1/leases): price, status, charged and cost so far."""
    if ctx.invoked_subcommand is not None:
        return
    filters = {"status": status or UNSET, "role": role or UNSET}
    leases = caller.ask(lambda client: list(pages(list_leases.sync_detailed, client, **filters)))
    caller.show(leases, leases_table)


def _stop_line(answer: StopAccepted) -> str:
    return f"lease {answer.lease_id}: {answer.status} at {stamp(answer.requested_at)}"


@leases_app.command("stop")
@grouped_options
def lease_stop(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """Stop a running lease (POST /v1/leases/ID/stop); billing ends it shortly after.

    Its Idempotency-Key is ``stop-ID``: stopping a lease is one act, however often retried."""
    key = write_key("stop", lease_id)
    stopped = caller.ask(
        lambda client: call(
            stop_lease.sync_detailed, client, lease_id=lease_id, idempotency_key=key
        )
    )
    caller.show(stopped, _stop_line)


def pending_interruption(client: AuthenticatedClient, lease_id: str) -> InterruptionOut | None:
    """The lease's pending interruption; None while none is pending (the endpoint's 404 of
    type ``no-interruption``; any other 404 is an error)."""
    try:
        return call(get_lease_interruption.sync_detailed, client, lease_id=lease_id)
    except ApiError as exc:
        if exc.status == 404 and exc.kind.endswith("/no-interruption"):
            return None
        raise


def _interruption_line(lease_id: str, answer: InterruptionOut | None) -> str:
    if answer is None:
        return f"lease {lease_id}: no interruption pending"
    return (
        f"lease {lease_id}: interrupted at {stamp(answer.interrupt_at)} ({answer.cause},"
        f" {answer.seconds_left} s left)"
    )


@leases_app.command("interruption")
@grouped_options
def lease_interruption(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """A pending interruption of the lease (GET /v1/leases/ID/interruption): when and why."""
    answer = caller.ask(lambda client: pending_interruption(client, lease_id))
    caller.show(answer, lambda a: _interruption_line(lease_id, a))


@leases_app.command("reclaim")
@grouped_options
def lease_reclaim(
    lease_id: Annotated[str, typer.Argument(metavar="ID", help="The lease's id.")],
    *,
    caller: Caller,
) -> None:
    """Take an interruptible lease's GPUs back (POST /v1/leases/ID/reclaim, sellers): it is
    interrupted after the offer's notice and the GPUs leave the offer. Its Idempotency-Key is
    ``reclaim-ID``."""
    key = write_key("reclaim", lease_id)
    answer = caller.ask(
        lambda client: call(
            reclaim_lease.sync_detailed, client, lease_id=lease_id, idempotency_key=key
        )
    )
    caller.show(answer, lambda a: f"lease {a.lease_id}: reclaim requested")


@grouped_options
def ledger_command(
    *,
    currency: Annotated[
        str | None,
        typer.Option(
            callback=currency_code, help="Only this currency, e.g. EUR.", show_default=False
        ),
    ] = None,
    caller: Caller,
) -> None:
    """Your ledger entries (GET /v1/ledger): top-ups, holds, charges, payouts."""
    wanted = Currency(currency) if currency else UNSET
    entries = caller.ask(
        lambda client: list(pages(list_ledger_entries.sync_detailed, client, currency=wanted))
    )
    caller.show(entries, ledger_table)


def _earnings(client: AuthenticatedClient) -> list[EarningsOut]:
    return call(list_earnings.sync_detailed, client).items


@grouped_options
def earnings_command(*, caller: Caller) -> None:
    """A seller's earnings per currency (GET /v1/accounts/me/earnings)."""
    caller.show(caller.ask(_earnings), earnings_table)


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.add_typer(leases_app, name="leases")
    app.command("ledger")(ledger_command)
    app.command("earnings")(earnings_command)
