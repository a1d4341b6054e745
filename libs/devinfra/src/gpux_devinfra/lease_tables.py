"""Rich tables of leases, ledger entries and earnings (presentation only).

Every amount is the API's decimal string with its currency, printed as it came.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from gpux_devinfra.market_tables import DASH, listing, money


def _when(stamp: Any) -> str:
    """`2025-01-01 12:00:05Z` from an RFC 3339 stamp (seconds kept, fraction dropped)."""
    if not stamp:
        return DASH
    text = str(stamp).replace("T", " ")
    head, _, _ = text.partition(".")
    return head.removesuffix("Z").removesuffix("+00:00") + "Z"


def lease_status(lease: dict[str, Any]) -> str:
    """`running`, `running (low balance)`, `interrupting (at 2025-01-01 12:02:00Z)` or
    `ended (insufficient_funds)`."""
    status = str(lease["status"])
    if status == "interrupting" and lease.get("interrupt_at"):
        return f"interrupting (at {_when(lease['interrupt_at'])})"
    if status == "ended" and lease.get("end_reason"):
        return f"ended ({lease['end_reason']})"
    if status == "running" and lease.get("low_balance_at"):
        return "running (low balance)"
    return status


LEASE_COLUMNS = ("id", "GPU", "GPUs", "price/GPU-h", "billing", "status", "started", "charged")
"""The columns of ``leases_table``, before its last: what the lease has cost so far."""


def _lease_row(lease: dict[str, Any]) -> list[str]:
    currency = lease["currency"]
    row = [lease["lease_id"], lease["gpu"], str(lease["gpus"])]
    row += [money(lease["price_per_gpu_hour"], currency), lease["billing"], lease_status(lease)]
    row += [_when(lease.get("started_at")), money(lease.get("total_charged"), currency)]
    return [*row, money(lease.get("cost_so_far"), currency)]


def leases_table(leases: list[dict[str, Any]]) -> Table:
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


def _entry_row(entry: dict[str, Any]) -> list[str]:
    row = [_when(entry.get("created_at")), entry["kind"], entry.get("account_kind") or DASH]
    row += [money(entry["amount"], entry["currency"]), entry.get("reference") or DASH]
    return [*row, entry.get("fx_rate") or DASH]


def ledger_table(entries: list[dict[str, Any]]) -> Table:
    """The caller's ledger: each transfer that moved money in or out of its accounts."""
    return listing(
        "Your ledger",
        ("when", "kind", "account", "amount", "reference", "FX rate"),
        map(_entry_row, entries),
        right=("amount", "FX rate"),
        empty="no entries",
    )


def earnings_table(items: list[dict[str, Any]]) -> Table:
    """A seller's earnings per currency: gross, the platform's fee, net; leases."""
    keys = ("currency", "gross", "fee", "net", "leases", "running")
    return listing(
        "Your earnings",
        keys,
        ([str(item[key]) for key in keys] for item in items),
        right=("gross", "fee", "net", "leases", "running"),
        empty="no earnings yet",
    )
