"""The funded orders the book was given (``matching.orders``): buyer and GPU of each.

A row also marks the order as given to the book, so a redelivered ``order.funded`` is not
placed twice. Within a unit of work the repository answers from what it read or saved
before (``preload`` reads a whole batch's orders in one query) and writes its saves in one
insert when the unit reads owners or commits (``flush``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import asyncpg


class PostgresOrders:
    """Orders on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self._known: dict[str, bool] = {}
        self._pending: dict[str, tuple[str, str]] = {}

    async def preload(self, order_ids: Iterable[str]) -> None:
        """Read whether each of these orders is known, in one query."""
        missing = sorted({i for i in order_ids if i not in self._known})
        if not missing:
            return
        rows = await self.conn.fetch(
            "SELECT order_id FROM matching.orders WHERE order_id = ANY($1::text[])", missing
        )
        found = {row["order_id"] for row in rows}
        self._known.update((i, i in found) for i in missing)

    async def known(self, order_id: str) -> bool:
        """Whether the book was already given this order."""
        if order_id not in self._known:
            await self.preload([order_id])
        return self._known[order_id]

    async def save(self, order_id: str, buyer_id: str, gpu: str) -> None:
        """Remember an order's buyer and GPU (the first save of an order wins)."""
        if self._known.get(order_id):
            return
        self._pending.setdefault(order_id, (buyer_id, gpu))
        self._known[order_id] = True

    async def flush(self) -> None:
        """Write the saves of this unit so far, in one insert."""
        if not self._pending:
            return
        ids, owners = list(self._pending), list(self._pending.values())
        self._pending = {}
        await self.conn.execute(
            "INSERT INTO matching.orders (order_id, buyer_id, gpu)"
            " SELECT * FROM unnest($1::text[], $2::text[], $3::text[])"
            " ON CONFLICT (order_id) DO NOTHING",
            ids,
            [buyer for buyer, _ in owners],
            [gpu for _, gpu in owners],
        )

    async def owners(self, order_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(buyer id, gpu) of each known order."""
        await self.flush()
        rows = await self.conn.fetch(
            "SELECT order_id, buyer_id, gpu FROM matching.orders WHERE order_id = ANY($1::text[])",
            list(order_ids),
        )
        return {row["order_id"]: (row["buyer_id"], row["gpu"]) for row in rows}
