"""What the orders resource stores: the buyers' view of their orders and their fills."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, TradeExecuted


@dataclass(frozen=True, slots=True)
class OrderRow:
    """An order as its buyer's view stores it (money in micro-units)."""

    id: str
    buyer_id: str
    gpu: str
    gpus: int
    filled_gpus: int
    remaining_gpus: int
    type: str
    max_price_micros: int | None
    currency: str
    tier: str
    region: str | None
    hours: int | None
    time_in_force: str
    expires_at: datetime | None
    status: str
    reason: str | None
    shortfall_micros: int | None
    shortfall_currency: str | None
    created_at: datetime
    updated_at: datetime
    wallet_currency: str | None = None
    """The wallet the buyer pays from (None: ``currency``'s)."""
    cap_from_billing: bool = False
    """Whether ``max_price_micros`` is the cap billing funded a market order at, not the
    buyer's own (a re-buy goes without it, as the buyer placed the order)."""
    rebuy_on_interruption: bool = False
    """Whether an interrupted lease of this order is bought again."""
    rebuy_of: str | None = None
    """The interrupted lease this order re-buys, if it does."""
    ssh_key_ids: Sequence[str] = ()
    """The buyer's SSH keys its leases get (empty: all the buyer's keys when a lease opens)."""
    min_reliability_bp: int | None = None
    """The lowest seller reliability rate the order fills from, in basis points (None: any)."""


@dataclass(frozen=True, slots=True)
class FillRow:
    """One fill of a buyer's order, from one trade."""

    trade_id: str
    seq: int
    order_id: str
    buyer_id: str
    gpus: int
    price_micros: int
    currency: str
    tier: str
    billing: str
    hours: int | None
    executed_at: datetime
    offer_id: str | None = None
    """The offer the fill took (None for fills kept before the view stored it)."""
    starts_at: datetime | None = None
    """When its lease starts, if later than ``executed_at`` (a preempting trade's)."""


class OrdersRepository(Protocol):
    """The orders and order_fills tables.

    ``apply_status`` and ``add_fill`` are written when the unit of work commits, in the order
    given (a batch of reports in one round trip); nothing in the same unit reads them back.
    """

    async def add(
        self, order: OrderPlaced, now: datetime, *, ssh_key_ids: Sequence[str] = ()
    ) -> OrderRow:
        """Store the buyer's view of a placed order (status pending_funds) with the SSH keys
        the buyer named for its leases."""
        ...

    async def get(self, buyer_id: str, order_id: str) -> OrderRow | None:
        """One of the buyer's orders (another buyer's is None, like a missing one)."""
        ...

    async def page(self, buyer_id: str, after: str | None, limit: int) -> list[OrderRow]:
        """Up to ``limit`` of the buyer's orders in id order, after the cursor id."""
        ...

    async def fills(self, buyer_id: str, order_id: str) -> list[FillRow]:
        """The fills of one of the buyer's orders, oldest first."""
        ...

    async def apply_status(self, change: OrderStatusChanged, now: datetime) -> None:
        """Take a status report unless it would undo a newer one (``domain.orders``)."""
        ...

    async def add_fill(self, trade: TradeExecuted) -> None:
        """Keep one fill of a buyer's order (a redelivered trade is kept once)."""
        ...

    async def apply_cap(self, buyer_id: str, order_id: str, cap_micros: int) -> None:
        """Show the price a market order without one was held and limited at (a price the
        buyer set is never replaced; ``cap_from_billing`` then says whose it is)."""
        ...
