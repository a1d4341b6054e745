"""Rich tables of leases, ledger entries and earnings (presentation only).

Every amount is the API's decimal string, shown to its currency's precision in the reader's
locale (``gpux_devinfra.amounts``: `$0.27`), never through a float; ``--json`` keeps the
API's own strings. An FX rate is shown as it came.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from rich.table import Table

from gpux_devinfra.amounts import DASH, money
from gpux_devinfra.market_tables import listing
from gpux_sdk.models.earnings_out import EarningsOut
from gpux_sdk.models.lease_out import LeaseOut
from gpux_sdk.models.lease_status import LeaseStatus
from gpux_sdk.models.ledger_line_out import LedgerLineOut


def _when(stamp: datetime | None) -> str:
    """`2025-01-01 12:00:05Z`: an instant in UTC, seconds kept, fraction dropped."""
    if stamp is None:
        return DASH
    return stamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def lease_status(lease: LeaseOut) -> str:
    """`running`, `running (low balance)`, `interrupting (at 2025-01-01 12:02:00Z)` or
    `ended (insufficient_funds)`."""
    status = lease.status
    if status == LeaseStatus.INTERRUPTING and lease.interrupt_at:
        return f"interrupting (at {_when(lease.interrupt_at)})"
    if status == LeaseStatus.ENDED and lease.end_reason:
        return f"ended ({lease.end_reason})"
    if status == LeaseStatus.RUNNING and lease.low_balance_at:
        return "running (low balance)"
    return str(status)


LEASE_COLUMNS = ("id", "GPU", "GPUs", "price/GPU-h", "billing", "status", "started", "charged")
"""The columns of ``leases_table``, before its last: what the lease has cost so far."""


def _lease_row(lease: LeaseOut) -> list[str]:
    currency = lease.currency
    row = [lease.lease_id, lease.gpu, str(lease.gpus)]
    row += [money(lease.price_per_gpu_hour, currency), str(lease.billing), lease_status(lease)]
    row += [_when(lease.started_at), money(lease.total_charged, currency)]
    return [*row, money(lease.cost_so_far, currency)]


def leases_table(leases: Iterable[LeaseOut]) -> Table:
    """The caller's leases: what runs, at what price, and what it has cost so far."""
    table = listing(
        "Your leases",
        (*LEASE_COLUMNS, "cost so far"),
        map(_lease_row, leases),
        right=("GPUs", "price/GPU-h", "charged", "cost so far"),
        empty="no leases",
    )
    # Only the id must stay whole on a narrow terminal; the other cells may wrap.
    for column in table.columns[1:]:
        column.no_wrap = False
    return table


def _entry_row(entry: LedgerLineOut) -> list[str]:
    row = [_when(entry.created_at), entry.kind, entry.account_kind or DASH]
    row += [money(entry.amount, entry.currency), entry.reference or DASH]
    return [*row, entry.fx_rate or DASH]


def ledger_table(entries: Iterable[LedgerLineOut]) -> Table:
    """The caller's ledger: each transfer that moved money in or out of its accounts."""
    return listing(
        "Your ledger",
        ("when", "kind", "account", "amount", "reference", "FX rate"),
        map(_entry_row, entries),
        right=("amount", "FX rate"),
        empty="no entries",
    )


def _earnings_row(item: EarningsOut) -> list[str]:
    amounts = [money(value, item.currency) for value in (item.gross, item.fee, item.net)]
    return [str(item.currency), *amounts, str(item.leases), str(item.running)]


def earnings_table(items: Iterable[EarningsOut]) -> Table:
    """A seller's earnings per currency: gross, the platform's fee, net (to the currency's
    precision: ``--json`` has the micro-units); leases."""
    return listing(
        "Your earnings",
        ("currency", "gross", "fee", "net", "leases", "running"),
        map(_earnings_row, items),
        right=("gross", "fee", "net", "leases", "running"),
        empty="no earnings yet",
    )
