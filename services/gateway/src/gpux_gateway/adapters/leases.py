"""The gateway's SQL for leases, statement lines and earnings (billing's events, applied).

Every writer here is an upsert that is safe in any order and under replay: what an event
carries is kept, totals follow the highest ``period`` read, and an ended lease stays ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseTotals,
    LedgerPosted,
)
from gpux_contracts.money import to_micros

ROLES = ("buyer", "seller")
"""The sides of a lease an account can be on (the `role` filter)."""


async def apply_opened(conn: asyncpg.Connection, opened: LeaseOpened, now: datetime) -> None:
    """Record what a lease is (its status and totals stay whatever later events made them)."""
    await conn.execute(
        "INSERT INTO gateway.leases (id, opened, order_id, offer_id, buyer_id, seller_id, gpu,"
        " tier, gpus, price_micros, currency, wallet_currency, billing, hours, started_at,"
        " ends_at, updated_at)"
        " VALUES ($1, true, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
        " ON CONFLICT (id) DO UPDATE SET opened = true, order_id = EXCLUDED.order_id,"
        " offer_id = EXCLUDED.offer_id, seller_id = EXCLUDED.seller_id, gpu = EXCLUDED.gpu,"
        " tier = EXCLUDED.tier, gpus = EXCLUDED.gpus, price_micros = EXCLUDED.price_micros,"
        " currency = EXCLUDED.currency, wallet_currency = EXCLUDED.wallet_currency,"
        " billing = EXCLUDED.billing, hours = EXCLUDED.hours, started_at = EXCLUDED.started_at,"
        " ends_at = EXCLUDED.ends_at, updated_at = EXCLUDED.updated_at",
        opened.lease_id,
        opened.order_id,
        opened.offer_id,
        opened.buyer_id,
        opened.seller_id,
        opened.gpu,
        opened.tier,
        opened.gpus,
        to_micros(opened.price_per_gpu_hour),
        opened.currency.value,
        opened.wallet_currency.value,
        opened.billing.value,
        opened.hours,
        opened.started_at,
        opened.ends_at,
        now,
    )


async def _ensure(
    conn: asyncpg.Connection,
    lease_id: str,
    buyer_id: str,
    seller_id: str | None,
    currency: str | None,
    wallet_currency: str,
    now: datetime,
) -> None:
    """Make sure the lease has a row, from what an event other than lease.opened carries."""
    await conn.execute(
        "INSERT INTO gateway.leases (id, buyer_id, seller_id, currency, wallet_currency,"
        " updated_at) VALUES ($1, $2, $3, $4, $5, $6)"
        " ON CONFLICT (id) DO UPDATE SET seller_id = coalesce(leases.seller_id, $3),"
        " currency = coalesce(leases.currency, $4)",
        lease_id,
        buyer_id,
        seller_id,
        currency,
        wallet_currency,
        now,
    )


async def _keep_totals(
    conn: asyncpg.Connection, lease_id: str, totals: LeaseTotals, now: datetime
) -> None:
    """Replace the lease's totals unless it already holds a later period's."""
    await conn.execute(
        "UPDATE gateway.leases SET period = $2, charged_through = $3,"
        " total_charged_micros = $4, total_paid_micros = $5, total_fee_micros = $6,"
        " total_seller_micros = $7, updated_at = $8"
        " WHERE id = $1 AND (period IS NULL OR period <= $2)",
        lease_id,
        totals.period,
        totals.charged_through,
        to_micros(totals.total_charged),
        to_micros(totals.total_paid),
        to_micros(totals.total_fee),
        to_micros(totals.total_seller),
        now,
    )


async def apply_charged(conn: asyncpg.Connection, charged: LeaseCharged, now: datetime) -> None:
    """Take a charge's running totals (a charge read before its lease.opened keeps them)."""
    await _ensure(
        conn,
        charged.lease_id,
        charged.buyer_id,
        charged.seller_id,
        charged.currency.value,
        charged.wallet_currency.value,
        now,
    )
    await _keep_totals(conn, charged.lease_id, charged.totals, now)


async def apply_low_balance(
    conn: asyncpg.Connection, warning: LeaseLowBalance, now: datetime
) -> None:
    """Note when the buyer's funds first ran low for this lease."""
    await _ensure(
        conn, warning.lease_id, warning.buyer_id, None, None, warning.wallet_currency.value, now
    )
    await conn.execute(
        "UPDATE gateway.leases SET low_balance_at = least(low_balance_at, $2), updated_at = $3"
        " WHERE id = $1",
        warning.lease_id,
        warning.as_of,
        now,
    )


async def apply_ended(conn: asyncpg.Connection, ended: LeaseEnded, now: datetime) -> None:
    """End the lease for good (the first end read stays) and take its final totals."""
    await _ensure(
        conn,
        ended.lease_id,
        ended.buyer_id,
        ended.seller_id,
        ended.currency.value,
        ended.wallet_currency.value,
        now,
    )
    await conn.execute(
        "UPDATE gateway.leases SET status = 'ended', end_reason = $2, ended_at = $3,"
        " unpaid_micros = $4, updated_at = $5 WHERE id = $1 AND status <> 'ended'",
        ended.lease_id,
        ended.reason.value,
        ended.ended_at,
        to_micros(ended.unpaid),
        now,
    )
    await _keep_totals(conn, ended.lease_id, ended.totals, now)


async def get_lease(
    conn: asyncpg.Pool | asyncpg.Connection, account_id: str, lease_id: str
) -> asyncpg.Record | None:
    """A lease the account rents or provides (anyone else's is None, like a missing one)."""
    return await conn.fetchrow(
        "SELECT * FROM gateway.leases WHERE id = $1 AND opened"
        " AND (buyer_id = $2 OR seller_id = $2)",
        lease_id,
        account_id,
    )


async def list_leases(
    pool: asyncpg.Pool,
    account_id: str,
    *,
    role: str | None,
    status: str | None,
    after: str | None,
    limit: int,
) -> list[asyncpg.Record]:
    """A page of the account's leases in id order, on the side ``role`` (None: both)."""
    return list(
        await pool.fetch(
            "SELECT * FROM gateway.leases WHERE opened"
            " AND (($2::text IS DISTINCT FROM 'seller' AND buyer_id = $1)"
            " OR ($2::text IS DISTINCT FROM 'buyer' AND seller_id = $1))"
            " AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR id > $4)"
            " ORDER BY id LIMIT $5",
            account_id,
            role,
            status,
            after,
            limit,
        )
    )


@dataclass(frozen=True, slots=True)
class Earnings:
    """A seller's takings in one currency, in micro-units."""

    currency: str
    gross_micros: int
    fee_micros: int
    net_micros: int
    leases: int
    running: int


async def earnings(pool: asyncpg.Pool, seller_id: str) -> list[Earnings]:
    """Per offer currency: the sums of the running totals of the leases the account sells."""
    rows = await pool.fetch(
        "SELECT currency, sum(total_charged_micros) AS gross, sum(total_fee_micros) AS fee,"
        " sum(total_seller_micros) AS net, count(*) AS leases,"
        " count(*) FILTER (WHERE status = 'running') AS running"
        " FROM gateway.leases WHERE seller_id = $1 AND opened"
        " GROUP BY currency ORDER BY currency",
        seller_id,
    )
    return [
        Earnings(
            r["currency"], int(r["gross"]), int(r["fee"]), int(r["net"]), r["leases"], r["running"]
        )
        for r in rows
    ]


async def insert_ledger_lines(conn: asyncpg.Connection, posted: LedgerPosted) -> None:
    """Keep each line of a posted transfer once (a replayed transfer adds nothing)."""
    await conn.executemany(
        "INSERT INTO gateway.ledger_lines (transfer_id, owner, currency, account_kind,"
        " transfer_kind, amount_micros, created_at, reference, fx_rate, fx_base, fx_quote,"
        " fx_rate_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        " ON CONFLICT (transfer_id, owner, currency, account_kind) DO NOTHING",
        [
            (
                posted.transfer_id,
                line.owner,
                line.currency.value,
                line.kind,
                posted.kind,
                to_micros(line.amount),
                posted.created_at,
                posted.reference,
                posted.fx_rate,
                None if posted.fx_base is None else posted.fx_base.value,
                None if posted.fx_quote is None else posted.fx_quote.value,
                posted.fx_rate_at,
            )
            for line in posted.lines
        ],
    )


async def ledger_lines(
    pool: asyncpg.Pool, owner: str, *, currency: str | None, before: int | None, limit: int
) -> list[asyncpg.Record]:
    """A page of the account's statement lines, newest first, after the cursor line."""
    return list(
        await pool.fetch(
            "SELECT * FROM gateway.ledger_lines WHERE owner = $1"
            " AND ($2::text IS NULL OR currency = $2)"
            " AND ($3::bigint IS NULL OR (created_at, seq) <"
            " (SELECT created_at, seq FROM gateway.ledger_lines WHERE seq = $3 AND owner = $1))"
            " ORDER BY created_at DESC, seq DESC LIMIT $4",
            owner,
            currency,
            before,
            limit,
        )
    )
