"""Leases and FX rates in PostgreSQL (schema ``billing``), read and written in batches.

Functions run on the caller's connection inside the caller's transaction. Settlement reads
due leases with ``FOR UPDATE SKIP LOCKED`` (several billing instances share the work) and
writes every changed lease back in one statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

import asyncpg

from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.leases import State, Terms, next_due
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as stored: what it was traded at, its terms, and its state."""

    id: str
    order_id: str
    offer_id: str
    gpu: str
    tier: str
    gpus: int
    price_micros_per_gpu_hour: int
    hours: int | None
    terms: Terms
    state: State


# Members by value: a dict lookup instead of Enum.__call__ for every row read.
_CURRENCIES = {c.value: c for c in Currency}
_BILLING = {b.value: b for b in BillingGranularity}


def _lease(row: asyncpg.Record) -> Lease:
    terms = Terms(
        row["id"],
        row["buyer_id"],
        row["seller_id"],
        _CURRENCIES[row["currency"]],
        _CURRENCIES[row["wallet_currency"]],
        row["price_micros"] * row["gpus"],
        _BILLING[row["billing"]],
        row["started_at"],
        row["ends_at"],
        row["settle_every_s"],
    )
    state = State(
        row["period"],
        row["charged_through"],
        row["charged_micros"],
        row["paid_micros"],
        row["fee_micros"],
        row["seller_micros"],
        row["held_micros"],
        row["unpaid_micros"],
        row["warned"],
        row["ended_at"],
        None if row["end_reason"] is None else LeaseEndReason(row["end_reason"]),
    )
    return Lease(
        row["id"],
        row["order_id"],
        row["offer_id"],
        row["gpu"],
        row["tier"],
        row["gpus"],
        row["price_micros"],
        row["hours"],
        terms,
        state,
    )


async def insert(conn: asyncpg.Connection, lease: Lease) -> bool:
    """Store a new lease; False when it exists already (a replayed trade)."""
    t, s = lease.terms, lease.state
    inserted = await conn.fetchval(
        "INSERT INTO billing.leases (id, order_id, offer_id, buyer_id, seller_id, gpu, tier,"
        " gpus, price_micros, currency, wallet_currency, billing, hours, settle_every_s,"
        " started_at, ends_at, held_micros, next_due_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
        " $18) ON CONFLICT (id) DO NOTHING RETURNING true",
        lease.id,
        lease.order_id,
        lease.offer_id,
        t.buyer_id,
        t.seller_id,
        lease.gpu,
        lease.tier,
        lease.gpus,
        lease.price_micros_per_gpu_hour,
        t.currency.value,
        t.wallet_currency.value,
        t.billing.value,
        lease.hours,
        t.settle_every_s,
        t.started_at,
        t.ends_at,
        s.held_micros,
        next_due(t, s),
    )
    return bool(inserted)


async def exists(conn: asyncpg.Connection, lease_id: str) -> bool:
    """Whether a lease was opened for this trade already."""
    found = await conn.fetchval("SELECT true FROM billing.leases WHERE id = $1", lease_id)
    return bool(found)


async def postpone(conn: asyncpg.Connection, lease_ids: Sequence[str], until: datetime) -> None:
    """Make running leases due again no sooner than ``until`` (nothing else changes)."""
    if lease_ids:
        await conn.execute(
            "UPDATE billing.leases SET next_due_at = greatest(next_due_at, $2)"
            " WHERE id = ANY($1::text[]) AND next_due_at IS NOT NULL",
            list(lease_ids),
            until,
        )


async def get(conn: asyncpg.Connection, lease_id: str) -> Lease | None:
    """A lease, locked for this transaction, or None."""
    row = await conn.fetchrow("SELECT * FROM billing.leases WHERE id = $1 FOR UPDATE", lease_id)
    return None if row is None else _lease(row)


async def due(conn: asyncpg.Connection, now: datetime, limit: int) -> list[Lease]:
    """Running leases due by ``now``, oldest first, locked (others' locked ones skipped)."""
    rows = await conn.fetch(
        "SELECT * FROM billing.leases WHERE next_due_at <= $1 ORDER BY next_due_at"
        " LIMIT $2 FOR UPDATE SKIP LOCKED",
        now,
        limit,
    )
    return [_lease(r) for r in rows]


async def save(conn: asyncpg.Connection, changed: Sequence[tuple[Terms, State]]) -> None:
    """Write the states of settled leases back (one statement)."""
    if not changed:
        return
    columns: list[list[object]] = [[] for _ in range(13)]
    for terms, s in changed:
        row: tuple[object, ...] = (
            terms.lease_id,
            s.period,
            s.charged_through,
            s.charged_micros,
            s.paid_micros,
            s.fee_micros,
            s.seller_micros,
            s.held_micros,
            s.unpaid_micros,
            s.warned,
            s.ended_at,
            None if s.end_reason is None else s.end_reason.value,
            next_due(terms, s),
        )
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    await conn.execute(
        "UPDATE billing.leases l SET period = u.period, charged_through = u.charged_through,"
        " charged_micros = u.charged, paid_micros = u.paid, fee_micros = u.fee,"
        " seller_micros = u.seller, held_micros = u.held, unpaid_micros = u.unpaid,"
        " warned = u.warned, ended_at = u.ended_at, end_reason = u.end_reason,"
        " next_due_at = u.next_due_at"
        " FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int8[], $5::int8[],"
        " $6::int8[], $7::int8[], $8::int8[], $9::int8[], $10::bool[], $11::timestamptz[],"
        " $12::text[], $13::timestamptz[]) AS u (id, period, charged_through, charged, paid,"
        " fee, seller, held, unpaid, warned, ended_at, end_reason, next_due_at)"
        " WHERE l.id = u.id",
        *columns,
    )


async def lock_available(
    conn: asyncpg.Connection, wallets: Iterable[tuple[str, Currency]]
) -> dict[tuple[str, Currency], int]:
    """Lock the buyers' available balances (in key order) and return them (0 if none yet)."""
    keys = sorted({(owner, currency.value) for owner, currency in wallets})
    rows = await conn.fetch(
        "SELECT a.owner, a.currency, a.balance_micros FROM billing.accounts a"
        " JOIN unnest($1::text[], $2::text[]) AS k (owner, currency)"
        " ON a.owner = k.owner AND a.currency = k.currency AND a.kind = 'available'"
        ' ORDER BY a.owner COLLATE "C", a.currency COLLATE "C" FOR UPDATE OF a',
        [k[0] for k in keys],
        [k[1] for k in keys],
    )
    found = {(r["owner"], Currency(r["currency"])): int(r["balance_micros"]) for r in rows}
    return {(owner, Currency(c)): found.get((owner, Currency(c)), 0) for owner, c in keys}


async def take_share(
    conn: asyncpg.Connection, order_id: str, gpus: int
) -> tuple[Currency, int] | None:
    """Move a fill's share of its order's hold to the lease: (wallet currency, micros).

    The shares of an order's fills add up to the hold's part for its filled GPUs (the same
    split the release of the unfilled part uses), whatever order the fills come in.
    """
    row = await conn.fetchrow(
        "SELECT currency, gpus, held_micros, leased_gpus FROM billing.holds WHERE order_id = $1"
        " FOR UPDATE",
        order_id,
    )
    if row is None:
        return None
    before = min(row["leased_gpus"], row["gpus"])
    after = min(before + gpus, row["gpus"])
    held = row["held_micros"]
    share = held * after // row["gpus"] - held * before // row["gpus"]
    await conn.execute(
        "UPDATE billing.holds SET leased_gpus = $2 WHERE order_id = $1", order_id, after
    )
    return Currency(row["currency"]), share


async def rates(conn: asyncpg.Connection) -> dict[Currency, ToReference]:
    """The latest rate of each currency into EUR."""
    rows = await conn.fetch("SELECT currency, rate, as_of FROM billing.fx_rates")
    return {
        Currency(r["currency"]): ToReference(
            Currency(r["currency"]), Decimal(r["rate"]), r["as_of"]
        )
        for r in rows
    }


async def record_rate(conn: asyncpg.Connection, rate: ToReference) -> None:
    """Keep a rate unless a newer one is stored."""
    await conn.execute(
        "INSERT INTO billing.fx_rates (currency, rate, as_of) VALUES ($1, $2, $3)"
        " ON CONFLICT (currency) DO UPDATE SET rate = EXCLUDED.rate, as_of = EXCLUDED.as_of"
        " WHERE billing.fx_rates.as_of <= EXCLUDED.as_of",
        rate.currency.value,
        format(rate.rate, "f"),
        rate.as_of,
    )


def ends_at(started_at: datetime, hours: int | None) -> datetime | None:
    """A fixed-length lease's end."""
    return None if hours is None else started_at + timedelta(hours=hours)
