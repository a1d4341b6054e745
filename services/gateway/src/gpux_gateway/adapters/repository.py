"""All the gateway's SQL: accounts, keys, offers, orders, idempotency records."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.money import to_micros
from gpux_contracts.offers import OfferStatusChanged, OfferSubmitted
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, TradeExecuted
from gpux_gateway.domain.access import Scope

SCHEMA = "gateway"


@dataclass(frozen=True, slots=True)
class AccountRow:
    """An account as stored."""

    id: str
    name: str
    roles: tuple[Role, ...]
    status: AccountStatus
    created_at: datetime


@dataclass(frozen=True, slots=True)
class KeyRow:
    """An API key as stored (its digest, never its secret)."""

    id: str
    account_id: str
    name: str
    digest: bytes
    scopes: frozenset[Scope]
    created_at: datetime
    revoked_at: datetime | None


def _account(row: asyncpg.Record) -> AccountRow:
    return AccountRow(
        row["id"],
        row["name"],
        tuple(Role(r) for r in row["roles"]),
        AccountStatus(row["status"]),
        row["created_at"],
    )


def _key(row: asyncpg.Record) -> KeyRow:
    return KeyRow(
        row["id"],
        row["account_id"],
        row["name"],
        bytes(row["digest"]),
        frozenset(Scope(s) for s in row["scopes"]),
        row["created_at"],
        row["revoked_at"],
    )


async def insert_account(conn: asyncpg.Connection, account: AccountRow) -> None:
    """Store a new account."""
    await conn.execute(
        "INSERT INTO gateway.accounts (id, name, roles, status, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, $5)",
        account.id,
        account.name,
        [r.value for r in account.roles],
        account.status.value,
        account.created_at,
    )


async def get_account(
    conn: asyncpg.Connection | asyncpg.Pool, account_id: str
) -> AccountRow | None:
    """One account, or None."""
    row = await conn.fetchrow("SELECT * FROM gateway.accounts WHERE id = $1", account_id)
    return _account(row) if row else None


async def set_account_status(
    conn: asyncpg.Connection, account_id: str, status: AccountStatus, now: datetime
) -> AccountRow | None:
    """Change an account's status; None when there is no such account."""
    row = await conn.fetchrow(
        "UPDATE gateway.accounts SET status = $2, updated_at = $3 WHERE id = $1 RETURNING *",
        account_id,
        status.value,
        now,
    )
    return _account(row) if row else None


async def insert_key(conn: asyncpg.Connection, key: KeyRow) -> None:
    """Store a new key's digest."""
    await conn.execute(
        "INSERT INTO gateway.api_keys (id, account_id, name, digest, scopes, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        key.id,
        key.account_id,
        key.name,
        key.digest,
        sorted(s.value for s in key.scopes),
        key.created_at,
    )


async def key_with_account(pool: asyncpg.Pool, key_id: str) -> tuple[KeyRow, AccountRow] | None:
    """A key and its account, for authentication."""
    row = await pool.fetchrow(
        "SELECT k.*, a.name AS a_name, a.roles, a.status, a.created_at AS a_created_at"
        " FROM gateway.api_keys k JOIN gateway.accounts a ON a.id = k.account_id"
        " WHERE k.id = $1",
        key_id,
    )
    if row is None:
        return None
    account = AccountRow(
        row["account_id"],
        row["a_name"],
        tuple(Role(r) for r in row["roles"]),
        AccountStatus(row["status"]),
        row["a_created_at"],
    )
    return _key(row), account


async def list_keys(pool: asyncpg.Pool, account_id: str) -> list[KeyRow]:
    """An account's keys, oldest first."""
    rows = await pool.fetch(
        "SELECT * FROM gateway.api_keys WHERE account_id = $1 ORDER BY id", account_id
    )
    return [_key(r) for r in rows]


async def revoke_key(pool: asyncpg.Pool, account_id: str, key_id: str, now: datetime) -> bool:
    """Revoke one of the account's keys; False when the account has no such key."""
    row = await pool.fetchrow(
        "UPDATE gateway.api_keys SET revoked_at = coalesce(revoked_at, $3)"
        " WHERE id = $1 AND account_id = $2 RETURNING id",
        key_id,
        account_id,
        now,
    )
    return row is not None


async def insert_offer(conn: asyncpg.Connection, offer: OfferSubmitted, now: datetime) -> None:
    """Store the seller's view of a submitted offer (status pending)."""
    await conn.execute(
        "INSERT INTO gateway.offers (id, seller_id, gpu, gpus, remaining_gpus, price_micros,"
        " currency, tier, billing, region, min_hours, available_until, status, created_at,"
        " updated_at)"
        " VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $12)",
        offer.offer_id,
        offer.seller_id,
        offer.gpu,
        offer.gpus,
        to_micros(offer.price_per_gpu_hour),
        offer.currency.value,
        offer.tier.value,
        offer.billing.value,
        offer.region,
        offer.min_hours,
        offer.available_until,
        now,
    )


async def get_offer(
    conn: asyncpg.Pool | asyncpg.Connection, seller_id: str, offer_id: str
) -> asyncpg.Record | None:
    """One of the seller's offers (another seller's is None, like a missing one)."""
    return await conn.fetchrow(
        "SELECT * FROM gateway.offers WHERE id = $1 AND seller_id = $2", offer_id, seller_id
    )


async def list_offers(
    pool: asyncpg.Pool, seller_id: str, after: str | None, limit: int
) -> list[asyncpg.Record]:
    """A page of the seller's offers in id order, after a cursor."""
    return list(
        await pool.fetch(
            "SELECT * FROM gateway.offers WHERE seller_id = $1 AND ($2::text IS NULL OR id > $2)"
            " ORDER BY id LIMIT $3",
            seller_id,
            after,
            limit,
        )
    )


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response kept for replays."""

    fingerprint: str
    status_code: int
    body: dict[str, Any]


async def find_response(
    conn: asyncpg.Connection, scope: str, key: str, not_before: datetime
) -> StoredResponse | None:
    """The stored response of an idempotent request, if it is still kept."""
    row = await conn.fetchrow(
        "SELECT fingerprint, status_code, body FROM gateway.idempotency"
        " WHERE scope = $1 AND key = $2 AND created_at >= $3",
        scope,
        key,
        not_before,
    )
    if row is None:
        return None
    return StoredResponse(row["fingerprint"], row["status_code"], json.loads(row["body"]))


async def store_response(
    conn: asyncpg.Connection, scope: str, key: str, response: StoredResponse, now: datetime
) -> None:
    """Keep a response for replays (replacing an expired one under the same key)."""
    await conn.execute(
        "INSERT INTO gateway.idempotency (scope, key, fingerprint, status_code, body, created_at)"
        " VALUES ($1, $2, $3, $4, $5::json, $6)"
        " ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,"
        " status_code = EXCLUDED.status_code, body = EXCLUDED.body,"
        " created_at = EXCLUDED.created_at",
        scope,
        key,
        response.fingerprint,
        response.status_code,
        json.dumps(response.body),
        now,
    )


async def purge_responses(pool: asyncpg.Pool, before: datetime) -> int:
    """Forget responses older than the retention; returns how many."""
    result = await pool.execute("DELETE FROM gateway.idempotency WHERE created_at < $1", before)
    return int(result.split()[-1])


async def apply_offer_status(
    conn: asyncpg.Connection, change: OfferStatusChanged, now: datetime
) -> None:
    """Set an offer's status, reason and remaining GPUs as pricing or the book reports them."""
    await conn.execute(
        "UPDATE gateway.offers SET status = $3, reason = $4, remaining_gpus = $5, updated_at = $6"
        " WHERE id = $1 AND seller_id = $2",
        change.offer_id,
        change.seller_id,
        change.status.value,
        change.reason,
        change.remaining_gpus,
        now,
    )


async def insert_order(conn: asyncpg.Connection, order: OrderPlaced, now: datetime) -> None:
    """Store the buyer's view of a placed order (status pending_funds)."""
    price = order.max_price_per_gpu_hour
    await conn.execute(
        "INSERT INTO gateway.orders (id, buyer_id, gpu, gpus, filled_gpus, remaining_gpus,"
        " type, max_price_micros, currency, tier, region, hours, time_in_force, expires_at,"
        " status, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, 0, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending_funds',"
        " $13, $13)",
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
    )


async def get_order(
    conn: asyncpg.Pool | asyncpg.Connection, buyer_id: str, order_id: str
) -> asyncpg.Record | None:
    """One of the buyer's orders (another buyer's is None, like a missing one)."""
    return await conn.fetchrow(
        "SELECT * FROM gateway.orders WHERE id = $1 AND buyer_id = $2", order_id, buyer_id
    )


async def list_orders(
    pool: asyncpg.Pool, buyer_id: str, after: str | None, limit: int
) -> list[asyncpg.Record]:
    """A page of the buyer's orders in id order, after a cursor."""
    return list(
        await pool.fetch(
            "SELECT * FROM gateway.orders WHERE buyer_id = $1 AND ($2::text IS NULL OR id > $2)"
            " ORDER BY id LIMIT $3",
            buyer_id,
            after,
            limit,
        )
    )


ORDER_FINAL = ("filled", "cancelled", "expired", "rejected")
"""Order statuses that never change again."""


async def apply_order_status(
    conn: asyncpg.Connection, change: OrderStatusChanged, now: datetime
) -> None:
    """Set an order's status, fills and reason as billing or the book reports them.

    An order that ended stays as it ended, and fills never go down: a late or redelivered
    report cannot undo a newer one.
    """
    shortfall = change.shortfall
    await conn.execute(
        "UPDATE gateway.orders SET status = $3, filled_gpus = $4, remaining_gpus = $5,"
        " reason = $6, shortfall_micros = $7, shortfall_currency = $8, updated_at = $9"
        " WHERE id = $1 AND buyer_id = $2 AND status <> ALL($10::text[]) AND filled_gpus <= $4",
        change.order_id,
        change.buyer_id,
        change.status.value,
        change.filled_gpus,
        change.remaining_gpus,
        change.reason,
        None if shortfall is None else to_micros(shortfall),
        None if change.shortfall_currency is None else change.shortfall_currency.value,
        now,
        list(ORDER_FINAL),
    )


async def insert_fill(conn: asyncpg.Connection, trade: TradeExecuted) -> None:
    """Keep one fill of a buyer's order (a redelivered trade is kept once)."""
    await conn.execute(
        "INSERT INTO gateway.order_fills (trade_id, order_id, buyer_id, gpus, price_micros,"
        " currency, tier, billing, hours, executed_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (trade_id) DO NOTHING",
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
    )


async def order_fills(
    conn: asyncpg.Pool | asyncpg.Connection, buyer_id: str, order_id: str
) -> list[asyncpg.Record]:
    """The fills of one of the buyer's orders, oldest first."""
    return list(
        await conn.fetch(
            "SELECT * FROM gateway.order_fills WHERE order_id = $1 AND buyer_id = $2 ORDER BY seq",
            order_id,
            buyer_id,
        )
    )
