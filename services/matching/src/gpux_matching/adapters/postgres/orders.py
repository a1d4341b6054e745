"""The funded orders the book was given (``matching.orders``): buyer and GPU of each.

A row also marks the order as given to the book, so a redelivered ``order.funded`` is not
placed twice. Within a unit of work the repository answers from what it read or saved
before (``preload`` reads a whole batch's orders in one query) and writes its saves in one
insert when the unit reads owners (``owners``: (buyer id, gpu) of each) or commits
(``flush``).
"""

from __future__ import annotations

from gpux_matching.adapters.postgres.preloaded import Preloaded


class PostgresOrders(Preloaded[bool, tuple[str, str]]):
    """Orders on one connection (inside the caller's transaction)."""

    OWNERS_SQL = (
        "SELECT order_id, buyer_id, gpu FROM matching.orders WHERE order_id = ANY($1::text[])"
    )

    INSERT_SQL = (
        "INSERT INTO matching.orders (order_id, buyer_id, gpu)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::text[])"
        " ON CONFLICT (order_id) DO NOTHING"
    )

    async def _fetch(self, ids: list[str]) -> dict[str, bool]:
        rows = await self.conn.fetch(
            "SELECT order_id FROM matching.orders WHERE order_id = ANY($1::text[])", ids
        )
        found = {row["order_id"] for row in rows}
        return {i: i in found for i in ids}

    async def known(self, order_id: str) -> bool:
        """Whether the book was already given this order."""
        return await self._answer(order_id)

    async def save(self, order_id: str, buyer_id: str, gpu: str) -> None:
        """Remember an order's buyer and GPU (the first save of an order wins)."""
        if self._cache.get(order_id):
            return
        self._pending.setdefault(order_id, (buyer_id, gpu))
        self._cache[order_id] = True
