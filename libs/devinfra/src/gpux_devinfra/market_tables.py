"""Rich tables of the market answers: prices, offers, orders, balances.

Presentation only: every amount is the API's decimal string, printed as it came (never a
float, never rounded here).
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

DASH = "—"


def money(amount: Any, currency: Any) -> str:
    return DASH if amount is None else f"{amount} {currency}"


def plain_table(title: str, *columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left", no_wrap=True)
    return table


def prices_table(items: list[dict[str, Any]], currency: str) -> Table:
    """Each book's best ask: GPU, tier, region, price per GPU-hour, GPUs at that price."""
    table = plain_table(
        f"Best asks per GPU-hour ({currency})",
        "GPU",
        "tier",
        "region",
        "best ask",
        "GPUs at best",
        right=("best ask", "GPUs at best"),
    )
    for item in items:
        ask = item.get("best_ask")
        if ask:
            table.add_row(
                item["gpu"],
                item["tier"],
                item.get("region") or DASH,
                money(ask["price"], ask["currency"]),
                str(ask["gpus"]),
            )
        else:
            table.add_row(item["gpu"], item["tier"], item.get("region") or DASH, DASH, DASH)
    if not items:
        table.caption = "no offers yet"
    return table


def offers_table(offers: list[dict[str, Any]]) -> Table:
    """The seller's offers."""
    table = plain_table(
        "Your offers",
        "id",
        "GPU",
        "GPUs",
        "left",
        "price/GPU-h",
        "tier",
        "billing",
        "status",
        right=("GPUs", "left", "price/GPU-h"),
    )
    for offer in offers:
        status = offer["status"]
        if offer.get("reason"):
            status = f"{status} ({offer['reason']})"
        table.add_row(
            offer["id"],
            offer["gpu"],
            str(offer["gpus"]),
            str(offer["remaining_gpus"]),
            money(offer["price_per_gpu_hour"], offer["currency"]),
            offer["tier"],
            offer["billing"],
            status,
        )
    if not offers:
        table.caption = "no offers"
    return table


def order_reason(order: dict[str, Any]) -> str:
    """`rejected (insufficient_funds, short 12.50 EUR)`, or just the status."""
    status = str(order["status"])
    reason = order.get("reason")
    if not reason:
        return status
    if order.get("shortfall") is not None:
        reason = f"{reason}, short {order['shortfall']} {order.get('shortfall_currency') or ''}"
    return f"{status} ({reason.strip()})"


def orders_table(orders: list[dict[str, Any]]) -> Table:
    """The buyer's orders."""
    table = plain_table(
        "Your orders",
        "id",
        "GPU",
        "type",
        "GPUs",
        "filled",
        "max price/GPU-h",
        "tier",
        "hours",
        "status",
        right=("GPUs", "filled", "max price/GPU-h", "hours"),
    )
    for order in orders:
        table.add_row(
            order["id"],
            order["gpu"],
            order["type"],
            str(order["gpus"]),
            str(order["filled_gpus"]),
            money(order.get("max_price_per_gpu_hour"), order["currency"]),
            order["tier"],
            DASH if order.get("hours") is None else str(order["hours"]),
            order_reason(order),
        )
    if not orders:
        table.caption = "no orders"
    return table


def balances_table(balances: list[dict[str, Any]]) -> Table:
    """The wallet: available and held per currency."""
    table = plain_table("Wallet", "currency", "available", "held", right=("available", "held"))
    for balance in balances:
        table.add_row(balance["currency"], balance["available"], balance["held"])
    if not balances:
        table.caption = "empty: top up with `gpux topup AMOUNT CURRENCY`"
    return table
