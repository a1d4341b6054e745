"""The funded orders the book was given (``matching.orders``): buyer and GPU of each.

A row also marks the order as given to the book, so a redelivered ``order.funded`` is not
placed twice.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


class PostgresOrders:
    """Orders on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def known(self, order_id: str) -> bool:
        """Whether the book was already given this order."""
        found: bool = await self.conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM matching.orders WHERE order_id = $1)", order_id
        )
        return found

    async def save(self, order_id: str, buyer_id: str, gpu: str) -> None:
        """Remember an order's buyer and GPU (the engine's updates name neither)."""
        await self.conn.execute(
            "INSERT INTO matching.orders (order_id, buyer_id, gpu) VALUES ($1, $2, $3)"
            " ON CONFLICT (order_id) DO NOTHING",
            order_id,
            buyer_id,
            gpu,
        )

    async def owners(self, order_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(buyer id, gpu) of each known order."""
        rows = await self.conn.fetch(
            "SELECT order_id, buyer_id, gpu FROM matching.orders WHERE order_id = ANY($1::text[])",
            list(order_ids),
        )
        return {row["order_id"]: (row["buyer_id"], row["gpu"]) for row in rows}
