"""Rich tables of the market answers: prices, offers, orders, balances.

Presentation only: every amount is the API's decimal string, printed as it came (never a
float, never rounded here).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich import box
from rich.table import Table

DASH = "—"


def money(amount: Any, currency: Any) -> str:
    return DASH if amount is None else f"{amount} {currency}"


def listing(
    title: str,
    columns: tuple[str, ...],
    rows: Iterable[Sequence[str]],
    *,
    right: tuple[str, ...] = (),
    empty: str,
) -> Table:
    """A table of ``rows`` under ``columns`` (``right`` ones right-aligned); with no rows, its
    caption says ``empty``."""
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    if not table.row_count:
        table.caption = empty
    return table


def _price_cells(item: dict[str, Any]) -> tuple[str, str]:
    ask = item.get("best_ask")
    return (money(ask["price"], ask["currency"]), str(ask["gpus"])) if ask else (DASH, DASH)


def prices_table(items: list[dict[str, Any]], currency: str) -> Table:
    """Each book's best ask: GPU, tier, region, price per GPU-hour, GPUs at that price."""
    return listing(
        f"Best asks per GPU-hour ({currency})",
        ("GPU", "tier", "region", "best ask", "GPUs at best"),
        ((i["gpu"], i["tier"], i.get("region") or DASH, *_price_cells(i)) for i in items),
        right=("best ask", "GPUs at best"),
        empty="no offers yet",
    )


def _offer_row(offer: dict[str, Any]) -> list[str]:
    status = offer["status"]
    if offer.get("reason"):
        status = f"{status} ({offer['reason']})"
    capacity = offer.get("capacity_gpus") or offer["gpus"]
    leased = offer.get("leased_gpus")
    row = [offer["id"], offer["gpu"], str(capacity), str(offer["remaining_gpus"])]
    row += [DASH if leased is None else str(leased)]
    row += [money(offer["price_per_gpu_hour"], offer["currency"])]
    row += [money(offer.get("interruptible_price_per_gpu_hour"), offer["currency"])]
    return [*row, offer["tier"], offer["billing"], status]


OFFER_COLUMNS = (
    "id", "GPU", "GPUs", "free", "leased", "price/GPU-h", "interruptible", "tier", "billing",
    "status",
)  # fmt: skip


def offers_table(offers: list[dict[str, Any]]) -> Table:
    """The seller's offers."""
    return listing(
        "Your offers",
        OFFER_COLUMNS,
        map(_offer_row, offers),
        right=("GPUs", "free", "leased", "price/GPU-h", "interruptible"),
        empty="no offers",
    )


def order_reason(order: dict[str, Any]) -> str:
    """`rejected (insufficient_funds, short 12.50 EUR)`, or just the status."""
    status = str(order["status"])
    reason = order.get("reason")
    if not reason:
        return status
    if order.get("shortfall") is not None:
        reason = f"{reason}, short {order['shortfall']} {order.get('shortfall_currency') or ''}"
    return f"{status} ({reason.strip()})"


def _order_row(order: dict[str, Any]) -> list[str]:
    row = [order["id"], order["gpu"], order["type"], str(order["gpus"]), str(order["filled_gpus"])]
    row += [money(order.get("max_price_per_gpu_hour"), order["currency"]), order["tier"]]
    row.append(DASH if order.get("hours") is None else str(order["hours"]))
    return [*row, order_reason(order)]


def orders_table(orders: list[dict[str, Any]]) -> Table:
    """The buyer's orders."""
    return listing(
        "Your orders",
        ("id", "GPU", "type", "GPUs", "filled", "max price/GPU-h", "tier", "hours", "status"),
        map(_order_row, orders),
        right=("GPUs", "filled", "max price/GPU-h", "hours"),
        empty="no orders",
    )


def balances_table(balances: list[dict[str, Any]]) -> Table:
    """The wallet: available and held per currency."""
    return listing(
        "Wallet",
        ("currency", "available", "held"),
        ([b["currency"], b["available"], b["held"]] for b in balances),
        right=("available", "held"),
        empty="empty: top up with `gpux topup AMOUNT CURRENCY`",
    )
