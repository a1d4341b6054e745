"""Billing's own records beside the ledger (schema ``billing``): top-ups and order holds.

Functions run on the caller's connection, inside the handler's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from gpux_contracts.money import Currency


@dataclass(frozen=True, slots=True)
class Topup:
    """A top-up as billing knows it; ``account_id`` is None while only a confirmation came."""

    id: str
    account_id: str | None
    currency: Currency | None
    amount_micros: int | None
    provider: str | None
    status: str
    confirmed: bool


@dataclass(frozen=True, slots=True)
class Hold:
    """The hold placed for one order."""

    order_id: str
    buyer_id: str
    gpu: str
    gpus: int
    currency: Currency
    held_micros: int
    released_micros: int


def _topup(row: asyncpg.Record) -> Topup:
    return Topup(
        row["id"],
        row["account_id"],
        None if row["currency"] is None else Currency(row["currency"]),
        row["amount_micros"],
        row["provider"],
        row["status"],
        row["confirmed"],
    )


async def topup(conn: asyncpg.Connection, topup_id: str) -> Topup | None:
    """A top-up, locked for this transaction, or None."""
    row = await conn.fetchrow("SELECT * FROM billing.topups WHERE id = $1 FOR UPDATE", topup_id)
    return None if row is None else _topup(row)


async def record_request(
    conn: asyncpg.Connection,
    topup_id: str,
    account_id: str,
    currency: Currency,
    amount_micros: int,
    provider: str,
    now: datetime,
) -> Topup:
    """Record a requested top-up (keeping a confirmation that came first); returns it."""
    row = await conn.fetchrow(
        "INSERT INTO billing.topups (id, account_id, currency, amount_micros, provider, status,"
        " requested_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'requested', $6, $6)"
        " ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id,"
        " currency = EXCLUDED.currency, amount_micros = EXCLUDED.amount_micros,"
        " provider = EXCLUDED.provider, requested_at = EXCLUDED.requested_at,"
        " updated_at = EXCLUDED.updated_at"
        " WHERE billing.topups.account_id IS NULL RETURNING *",
        topup_id,
        account_id,
        currency.value,
        amount_micros,
        provider,
        now,
    )
    if row is None:  # requested before (another command id with the same top-up id)
        found = await topup(conn, topup_id)
        assert found is not None
        return found
    return _topup(row)


async def record_confirmation(conn: asyncpg.Connection, topup_id: str, now: datetime) -> Topup:
    """Mark a top-up confirmed (creating a placeholder when its request has not come yet)."""
    row = await conn.fetchrow(
        "INSERT INTO billing.topups (id, status, confirmed, updated_at)"
        " VALUES ($1, 'requested', true, $2)"
        " ON CONFLICT (id) DO UPDATE SET confirmed = true, updated_at = EXCLUDED.updated_at"
        " RETURNING *",
        topup_id,
        now,
    )
    return _topup(row)


async def set_topup_status(
    conn: asyncpg.Connection, topup_id: str, status: str, reason: str | None, now: datetime
) -> None:
    """Move a top-up to ``booked`` or ``rejected``."""
    await conn.execute(
        "UPDATE billing.topups SET status = $2, reason = $3, updated_at = $4 WHERE id = $1",
        topup_id,
        status,
        reason,
        now,
    )


def _hold(row: asyncpg.Record) -> Hold:
    return Hold(
        row["order_id"],
        row["buyer_id"],
        row["gpu"],
        row["gpus"],
        Currency(row["currency"]),
        row["held_micros"],
        row["released_micros"],
    )


async def record_hold(
    conn: asyncpg.Connection,
    order_id: str,
    buyer_id: str,
    gpu: str,
    gpus: int,
    currency: Currency,
    held_micros: int,
    now: datetime,
) -> None:
    """Remember the hold placed for an order (once)."""
    await conn.execute(
        "INSERT INTO billing.holds (order_id, buyer_id, gpu, gpus, currency, held_micros,"
        " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (order_id) DO NOTHING",
        order_id,
        buyer_id,
        gpu,
        gpus,
        currency.value,
        held_micros,
        now,
    )


async def hold(conn: asyncpg.Connection, order_id: str) -> Hold | None:
    """The hold of an order, locked for this transaction, or None."""
    row = await conn.fetchrow(
        "SELECT * FROM billing.holds WHERE order_id = $1 FOR UPDATE", order_id
    )
    return None if row is None else _hold(row)


async def record_release(
    conn: asyncpg.Connection, order_id: str, released_micros: int, now: datetime
) -> None:
    """Add to what has been released of an order's hold."""
    await conn.execute(
        "UPDATE billing.holds SET released_micros = released_micros + $2, released_at = $3"
        " WHERE order_id = $1",
        order_id,
        released_micros,
        now,
    )
