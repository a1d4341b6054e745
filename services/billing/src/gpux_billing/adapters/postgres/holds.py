"""Order holds in PostgreSQL (``billing.holds``), with what fills and releases took of them."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from gpux_billing.domain.holds import Hold
from gpux_contracts.money import Currency


def _hold(row: asyncpg.Record) -> Hold:
    return Hold(
        row["order_id"],
        row["buyer_id"],
        row["gpu"],
        row["gpus"],
        Currency(row["currency"]),
        row["held_micros"],
        row["released_micros"],
        row["leased_gpus"],
    )


class PostgresHolds:
    """Holds on the unit of work's connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def get(self, order_id: str) -> Hold | None:
        """The hold of an order, locked for this transaction, or None."""
        row = await self.conn.fetchrow(
            "SELECT * FROM billing.holds WHERE order_id = $1 FOR UPDATE", order_id
        )
        return None if row is None else _hold(row)

    async def add(self, hold: Hold, at: datetime) -> None:
        """Remember the hold placed for an order (once)."""
        await self.conn.execute(
            "INSERT INTO billing.holds (order_id, buyer_id, gpu, gpus, currency, held_micros,"
            " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (order_id) DO NOTHING",
            hold.order_id,
            hold.buyer_id,
            hold.gpu,
            hold.gpus,
            hold.currency.value,
            hold.held_micros,
            at,
        )

    async def record_release(self, order_id: str, released_micros: int, at: datetime) -> None:
        """Add to what has been released of an order's hold."""
        await self.conn.execute(
            "UPDATE billing.holds SET released_micros = released_micros + $2, released_at = $3"
            " WHERE order_id = $1",
            order_id,
            released_micros,
            at,
        )

    async def set_leased_gpus(self, order_id: str, leased_gpus: int) -> None:
        """Record how many of the order's GPUs took their share of the hold into leases."""
        await self.conn.execute(
            "UPDATE billing.holds SET leased_gpus = $2 WHERE order_id = $1", order_id, leased_gpus
        )
