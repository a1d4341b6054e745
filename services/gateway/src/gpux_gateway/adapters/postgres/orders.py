"""The orders and order_fills tables: the buyers' view of their orders."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gpux_contracts.money import to_micros
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, TradeExecuted
from gpux_contracts.reliability import min_reliability_bp
from gpux_gateway.adapters.postgres.deferred import DeferredRepository
from gpux_gateway.adapters.postgres.repository import OwnedTable
from gpux_gateway.domain.orders import FINAL
from gpux_gateway.orders.repository import FillRow, OrderRow

# The condition is domain.orders.report_applies: an ended order stays ended, fills never drop.
APPLY_STATUS = (
    "UPDATE gateway.orders SET status = $3, filled_gpus = $4, remaining_gpus = $5,"
    " reason = $6, shortfall_micros = $7, shortfall_currency = $8, updated_at = $9"
    " WHERE id = $1 AND buyer_id = $2 AND status <> ALL($10::text[]) AND filled_gpus <= $4"
)
ADD_FILL = (
    "INSERT INTO gateway.order_fills (trade_id, order_id, buyer_id, gpus, price_micros,"
    " currency, tier, billing, hours, executed_at, offer_id, starts_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (trade_id) DO NOTHING"
)
ORDERS = OwnedTable("gateway.orders", "buyer_id", lambda row: OrderRow(**dict(row)))

# The cap billing held a market order at, shown where the buyer gave none.
APPLY_CAP = (
    "UPDATE gateway.orders SET max_price_micros = $3, cap_from_billing = true"
    " WHERE id = $1 AND buyer_id = $2 AND max_price_micros IS NULL"
)


class PostgresOrders(DeferredRepository):
    """Orders in ``gateway.orders`` and their fills; reports are deferred to the commit."""

    async def add(
        self, order: OrderPlaced, now: datetime, *, ssh_key_ids: Sequence[str] = ()
    ) -> OrderRow:
        """Store the buyer's view of a placed order (status pending_funds) with its SSH keys."""
        price = order.max_price_per_gpu_hour
        row = await self._conn.fetchrow(
            "INSERT INTO gateway.orders (id, buyer_id, gpu, gpus, filled_gpus, remaining_gpus,"
            " type, max_price_micros, currency, tier, region, hours, time_in_force, expires_at,"
            " status, created_at, updated_at, wallet_currency, rebuy_on_interruption, rebuy_of,"
            " ssh_key_ids, min_reliability_bp)"
            " VALUES ($1, $2, $3, $4, 0, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending_funds',"
            " $13, $13, $14, $15, $16, $17, $18) RETURNING *",
            order.order_id,
            order.buyer_id,
            order.gpu,
            order.gpus,
            order.type.value,
            None if price is None else to_micros(price),
            order.currency.value,
            order.tier.value,
            order.region,
            order.hours,
            order.time_in_force.value,
            order.expires_at,
            now,
            None if order.wallet_currency is None else order.wallet_currency.value,
            order.rebuy_on_interruption,
            order.rebuy_of,
            list(ssh_key_ids),
            min_reliability_bp(order.min_reliability),
        )
        assert row is not None
        return OrderRow(**dict(row))

    async def get(self, buyer_id: str, order_id: str) -> OrderRow | None:
        """One of the buyer's orders (another buyer's is None, like a missing one)."""
        return await ORDERS.get(self._conn, buyer_id, order_id)

    async def page(self, buyer_id: str, after: str | None, limit: int) -> list[OrderRow]:
        """Up to ``limit`` of the buyer's orders in id order, after the cursor id."""
        return await ORDERS.page(self._conn, buyer_id, after, limit)

    async def fills(self, buyer_id: str, order_id: str) -> list[FillRow]:
        """The fills of one of the buyer's orders, oldest first."""
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.order_fills WHERE order_id = $1 AND buyer_id = $2 ORDER BY seq",
            order_id,
            buyer_id,
        )
        return [FillRow(**dict(r)) for r in rows]

    async def apply_status(self, change: OrderStatusChanged, now: datetime) -> None:
        """Take a status report unless it would undo a newer one (at the commit)."""
        shortfall = change.shortfall
        self._deferred.add(
            APPLY_STATUS,
            change.order_id,
            change.buyer_id,
            change.status.value,
            change.filled_gpus,
            change.remaining_gpus,
            change.reason,
            None if shortfall is None else to_micros(shortfall),
            None if change.shortfall_currency is None else change.shortfall_currency.value,
            now,
            list(FINAL),
        )

    async def add_fill(self, trade: TradeExecuted) -> None:
        """Keep one fill of a buyer's order, once (at the commit)."""
        self._deferred.add(
            ADD_FILL,
            trade.trade_id,
            trade.order_id,
            trade.buyer_id,
            trade.gpus,
            to_micros(trade.price_per_gpu_hour),
            trade.currency.value,
            trade.tier,
            trade.billing,
            trade.hours,
            trade.executed_at,
            trade.offer_id,
            trade.starts_at,
        )

    async def apply_cap(self, buyer_id: str, order_id: str, cap_micros: int) -> None:
        """Show a market order's held cap where it has no price of its own (at the commit)."""
        self._deferred.add(APPLY_CAP, order_id, buyer_id, cap_micros)
