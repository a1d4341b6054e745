"""Rich tables of leases, ledger entries and earnings (presentation only).

Every amount is the API's decimal string with its currency, printed as it came.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from gpux_devinfra.market_tables import DASH, money, plain_table


def _when(stamp: Any) -> str:
    """`2025-01-01 12:00:05Z` from an RFC 3339 stamp (seconds kept, fraction dropped)."""
    if not stamp:
        return DASH
    text = str(stamp).replace("T", " ")
    head, _, _ = text.partition(".")
    return head.removesuffix("Z").removesuffix("+00:00") + "Z"


def lease_status(lease: dict[str, Any]) -> str:
    """`running`, `running (low balance)` or `ended (insufficient_funds)`."""
    status = str(lease["status"])
    if status == "ended" and lease.get("end_reason"):
        return f"ended ({lease['end_reason']})"
    if status == "running" and lease.get("low_balance_at"):
        return "running (low balance)"
    return status


def leases_table(leases: list[dict[str, Any]]) -> Table:
    """The caller's leases: what runs, at what price, and what it has cost so far."""
    table = plain_table(
        "Your leases",
        "id",
        "GPU",
        "GPUs",
        "price/GPU-h",
        "billing",
        "status",
        "started",
        "charged",
        "cost so far",
        right=("GPUs", "price/GPU-h", "charged", "cost so far"),
    )
    # Only the id must stay whole on a narrow terminal; the other cells may wrap.
    for column in table.columns[1:]:
        column.no_wrap = False
    for lease in leases:
        currency = lease["currency"]
        table.add_row(
            lease["lease_id"],
            lease["gpu"],
            str(lease["gpus"]),
            money(lease["price_per_gpu_hour"], currency),
            lease["billing"],
            lease_status(lease),
            _when(lease.get("started_at")),
            money(lease.get("total_charged"), currency),
            money(lease.get("cost_so_far"), currency),
        )
    if not leases:
        table.caption = "no leases"
    return table


def ledger_table(entries: list[dict[str, Any]]) -> Table:
    """The caller's ledger: each transfer that moved money in or out of its accounts."""
    table = plain_table(
        "Your ledger",
        "when",
        "kind",
        "account",
        "amount",
        "reference",
        "FX rate",
        right=("amount", "FX rate"),
    )
    for entry in entries:
        table.add_row(
            _when(entry.get("created_at")),
            entry["kind"],
            entry.get("account_kind") or DASH,
            money(entry["amount"], entry["currency"]),
            entry.get("reference") or DASH,
            entry.get("fx_rate") or DASH,
        )
    if not entries:
        table.caption = "no entries"
    return table


def earnings_table(items: list[dict[str, Any]]) -> Table:
    """A seller's earnings per currency: gross, the platform's fee, net; leases."""
    table = plain_table(
        "Your earnings",
        "currency",
        "gross",
        "fee",
        "net",
        "leases",
        "running",
        right=("gross", "fee", "net", "leases", "running"),
    )
    for item in items:
        table.add_row(
            item["currency"],
            item["gross"],
            item["fee"],
            item["net"],
            str(item["leases"]),
            str(item["running"]),
        )
    if not items:
        table.caption = "no earnings yet"
    return table
