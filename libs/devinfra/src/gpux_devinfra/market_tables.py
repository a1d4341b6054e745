"""Rich tables of the market answers: prices, an order book, offers, orders, balances.

Presentation only, from the SDK's models: every amount is the API's decimal string, shown to
its currency's precision in the reader's locale (``gpux_devinfra.amounts``), never a float.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import zip_longest

from rich import box
from rich.table import Table

from gpux_devinfra import amounts
from gpux_devinfra.amounts import DASH
from gpux_sdk.models.balance_out import BalanceOut
from gpux_sdk.models.book_level_out import BookLevelOut
from gpux_sdk.models.offer_out import OfferOut
from gpux_sdk.models.order_book_out import OrderBookOut
from gpux_sdk.models.order_detail_out import OrderDetailOut
from gpux_sdk.models.order_out import OrderOut
from gpux_sdk.models.price_out import PriceOut


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


@dataclass(frozen=True)
class BookQuote:
    """One book's best ask as the prices table shows it: from GET /v1/prices, or from a quote
    of the price stream (``price_watch``)."""

    gpu: str
    tier: str
    region: str
    price: str | None
    """Per GPU-hour in ``currency``; None while nothing is offered (in that currency)."""
    currency: str
    gpus: int | None
    """GPUs at that price."""
    as_of: str

    @classmethod
    def of(cls, item: PriceOut) -> BookQuote:
        """An item of GET /v1/prices."""
        ask = item.best_ask
        price, gpus = (ask.price, ask.gpus) if ask else (None, None)
        return cls(item.gpu, item.tier, item.region, price, str(item.currency), gpus, item.as_of)


def _price_cells(quote: BookQuote) -> tuple[str, str]:
    if quote.price is None:
        return DASH, DASH
    return amounts.money(quote.price, quote.currency), str(quote.gpus)


def prices_table(quotes: Iterable[BookQuote], currency: str) -> Table:
    """Each book's best ask: GPU, tier, region, price per GPU-hour, GPUs at that price."""
    return listing(
        f"Best asks per GPU-hour ({currency})",
        ("GPU", "tier", "region", "best ask", "GPUs at best"),
        ((q.gpu, q.tier, q.region or DASH, *_price_cells(q)) for q in quotes),
        right=("best ask", "GPUs at best"),
        empty="no offers yet",
    )


def _level_cells(level: BookLevelOut | None, currency: str) -> list[str]:
    if level is None:
        return ["", "", ""]
    return [str(level.orders), str(level.gpus), amounts.money(level.price, currency)]


def book_table(book: OrderBookOut) -> Table:
    """Both sides of a book side by side, best first: bids (highest) left, asks (lowest)
    right, each level's orders, GPUs and price per GPU-hour."""
    currency = str(book.currency)
    rows = (
        [*_level_cells(bid, currency), *reversed(_level_cells(ask, currency))]
        for bid, ask in zip_longest(book.bids, book.asks)
    )
    table = listing(
        f"{book.gpu} {book.tier} order book ({currency} per GPU-hour)",
        ("bid orders", "bid GPUs", "bid", "ask", "ask GPUs", "ask orders"),
        rows,
        right=("bid orders", "bid GPUs", "bid"),
        empty="nothing on the book",
    )
    if table.row_count:
        as_of = book.as_of if isinstance(book.as_of, str) else DASH
        table.caption = f"at most {book.depth} levels a side; as of {as_of}"
    return table


def _offer_row(offer: OfferOut) -> list[str]:
    status = offer.status
    if offer.reason:
        status = f"{status} ({offer.reason})"
    row = [offer.id, offer.gpu, str(offer.capacity_gpus), str(offer.remaining_gpus)]
    row += [str(offer.leased_gpus), amounts.money(offer.price_per_gpu_hour, offer.currency)]
    row += [amounts.money(offer.interruptible_price_per_gpu_hour, offer.currency)]
    return [*row, str(offer.tier), str(offer.billing), delivered(offer), status]


def delivered(offer: OfferOut) -> str:
    """The offer's delivery record: `19/20 ready (95.00 %)`, or a dash while nothing is
    counted (billing's counts, docs/DELIVERY.md)."""
    counts = offer.reliability.offer
    total = counts.ready_in_time + counts.failed + counts.reclaimed
    if not total or not isinstance(counts.rate, str):
        return DASH
    return f"{counts.ready_in_time}/{total} ready ({Decimal(counts.rate) * 100:.2f} %)"


OFFER_COLUMNS = (
    "id", "GPU", "GPUs", "free", "leased", "price/GPU-h", "interruptible", "tier", "billing",
    "delivered", "status",
)  # fmt: skip


def offers_table(offers: Iterable[OfferOut]) -> Table:
    """The seller's offers."""
    return listing(
        "Your offers",
        OFFER_COLUMNS,
        map(_offer_row, offers),
        right=("GPUs", "free", "leased", "price/GPU-h", "interruptible"),
        empty="no offers",
    )


def status_reason(
    status: str, reason: str | None, shortfall: str | None = None, currency: str | None = None
) -> str:
    """`rejected (insufficient_funds, short $12.50)`, or just the status."""
    if not reason:
        return status
    if shortfall is not None:
        reason = f"{reason}, short {amounts.money(shortfall, currency)}"
    return f"{status} ({reason})"


def order_reason(order: OrderOut | OrderDetailOut) -> str:
    """An order's status with why it ended, if it says (``status_reason``)."""
    currency = None if order.shortfall_currency is None else str(order.shortfall_currency)
    return status_reason(str(order.status), order.reason, order.shortfall, currency)


def _order_row(order: OrderOut) -> list[str]:
    row = [order.id, order.gpu, str(order.type_), str(order.gpus), str(order.filled_gpus)]
    row += [amounts.money(order.max_price_per_gpu_hour, order.currency), str(order.tier)]
    row.append(DASH if order.hours is None else str(order.hours))
    return [*row, order_reason(order)]


def orders_table(orders: Iterable[OrderOut]) -> Table:
    """The buyer's orders."""
    return listing(
        "Your orders",
        ("id", "GPU", "type", "GPUs", "filled", "max price/GPU-h", "tier", "hours", "status"),
        map(_order_row, orders),
        right=("GPUs", "filled", "max price/GPU-h", "hours"),
        empty="no orders",
    )


def balances_table(balances: Iterable[BalanceOut]) -> Table:
    """The wallet: available and held per currency."""
    return listing(
        "Wallet",
        ("currency", "available", "held"),
        (
            [
                str(b.currency),
                amounts.money(b.available, b.currency),
                amounts.money(b.held, b.currency),
            ]
            for b in balances
        ),
        right=("available", "held"),
        empty="empty: top up with `gpux topup AMOUNT CURRENCY`",
    )
