"""`gpux payouts request` and `gpux payouts list`: a seller's payouts of its payable earnings."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

import typer
from rich.table import Table

from gpux_devinfra.amounts import DASH, money
from gpux_devinfra.cli_support import Caller, Writer, grouped_options, stamp
from gpux_devinfra.market_tables import listing
from gpux_devinfra.sdk_client import pages
from gpux_sdk.api.payouts import list_payouts, request_payout
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.new_payout import NewPayout
from gpux_sdk.models.payout_out import PayoutOut

_AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")

payouts_app = typer.Typer(
    help="Your payouts (sellers): ask for one, list them.", no_args_is_help=True
)


def _amount(value: str) -> str:
    """A payout amount as typed (`50.00`): checked, never turned into a float."""
    text = value.strip()
    if not _AMOUNT.match(text):
        raise typer.BadParameter(
            f"{value!r} is not an amount such as 50.00 (at most 2 decimals)", param_hint="--amount"
        )
    return text


def _payout_line(payout: PayoutOut) -> str:
    return (
        f"payout {payout.id}: {money(payout.amount, payout.currency)} {payout.status}"
        f" ({payout.method}) to {payout.destination}"
    )


def _status(payout: PayoutOut) -> str:
    return f"{payout.status} ({payout.reason})" if payout.reason else str(payout.status)


def payouts_table(payouts: Iterable[PayoutOut]) -> Table:
    """The seller's payouts: how much, where to, where it is."""
    rows = (
        [
            p.id,
            money(p.amount, p.currency),
            p.destination,
            _status(p),
            p.reference or DASH,
            stamp(p.created_at).replace("T", " "),
        ]
        for p in payouts
    )
    columns = ("id", "amount", "destination", "status", "reference", "requested")
    return listing("Your payouts", columns, rows, right=("amount",), empty="no payouts")


@payouts_app.command("request")
@grouped_options
def request_command(
    *,
    currency: Annotated[Currency, typer.Option(help="The payable balance's currency.")],
    amount: Annotated[str, typer.Option(help="How much, e.g. 50.00 (at least the minimum).")],
    destination: Annotated[
        str, typer.Option(help="Where to send it, e.g. an IBAN reference (free text).")
    ],
    caller: Writer,
) -> None:
    """Ask for a payout of your payable earnings (POST /v1/payouts, sellers): billing takes it
    from your payable balance (pending), an admin confirms the bank transfer (paid)."""
    body = NewPayout(currency=currency, amount=_amount(amount), destination=destination)
    caller.show(caller.send(request_payout.sync_detailed, body), _payout_line)


@payouts_app.command("list")
@grouped_options
def list_command(*, caller: Caller) -> None:
    """Your payouts and their status (GET /v1/payouts)."""
    payouts = caller.ask(lambda client: list(pages(list_payouts.sync_detailed, client)))
    caller.show(payouts, payouts_table)


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.add_typer(payouts_app, name="payouts")
