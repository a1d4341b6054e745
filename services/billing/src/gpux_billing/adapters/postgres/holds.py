"""Order holds in PostgreSQL (``billing.holds``), with what fills and releases took of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
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


_GET = "SELECT * FROM billing.holds WHERE order_id = $1 FOR UPDATE"
_GET_MANY = """
SELECT * FROM billing.holds WHERE order_id = ANY($1::text[])
 ORDER BY order_id COLLATE "C" FOR UPDATE
"""
_ADD_MANY = """
INSERT INTO billing.holds (order_id, buyer_id, gpu, gpus, currency, held_micros, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::int8[],
                     $7::timestamptz[])
ON CONFLICT (order_id) DO NOTHING
"""
_RECORD_RELEASES = """
UPDATE billing.holds h SET released_micros = h.released_micros + r.amount, released_at = r.at
  FROM unnest($1::text[], $2::int8[], $3::timestamptz[]) AS r (order_id, amount, at)
 WHERE h.order_id = r.order_id
"""
_SET_LEASED_GPUS = """
UPDATE billing.holds h SET leased_gpus = l.leased_gpus
  FROM unnest($1::text[], $2::int4[]) AS l (order_id, leased_gpus)
 WHERE h.order_id = l.order_id
"""


def _row(hold: Hold, at: datetime) -> tuple[object, ...]:
    return (
        hold.order_id,
        hold.buyer_id,
        hold.gpu,
        hold.gpus,
        hold.currency.value,
        hold.held_micros,
        at,
    )


class PostgresHolds(PostgresRepository):
    """Holds on the unit of work's connection."""

    async def get(self, order_id: str) -> Hold | None:
        """The hold of an order, locked for this transaction, or None."""
        return await self._one(_GET, order_id, _hold)

    async def get_many(self, order_ids: Sequence[str]) -> dict[str, Hold]:
        """The holds of these orders (those that have one), locked in key order, one query."""
        if not order_ids:
            return {}
        rows = await self.conn.fetch(_GET_MANY, list(order_ids))
        return {row["order_id"]: _hold(row) for row in rows}

    async def add_many(self, holds: Sequence[tuple[Hold, datetime]]) -> None:
        """Remember the holds placed for orders (once per order), one statement."""
        if holds:
            columns = list(zip(*(_row(hold, at) for hold, at in holds), strict=True))
            await self.conn.execute(_ADD_MANY, *(list(c) for c in columns))

    async def record_releases(self, releases: Sequence[tuple[str, int, datetime]]) -> None:
        """Add to what has been released of orders' holds, one statement."""
        summed: dict[str, tuple[int, datetime]] = {}
        for order_id, amount, at in releases:  # one row per order: UPDATE ... FROM takes one
            summed[order_id] = (summed.get(order_id, (0, at))[0] + amount, at)
        if summed:
            await self.conn.execute(
                _RECORD_RELEASES,
                list(summed),
                [amount for amount, _ in summed.values()],
                [at for _, at in summed.values()],
            )

    async def set_leased_gpus(self, leased_gpus: Mapping[str, int]) -> None:
        """Record how many of each order's GPUs took their share of its hold into leases, one
        statement."""
        if leased_gpus:
            await self.conn.execute(_SET_LEASED_GPUS, list(leased_gpus), list(leased_gpus.values()))
