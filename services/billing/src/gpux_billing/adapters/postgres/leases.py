"""Leases in PostgreSQL (``billing.leases``), read and written in batches.

Settlement reads due leases with ``FOR UPDATE SKIP LOCKED`` (several billing instances share
the work) and writes every changed lease back in one statement, its interruption (if the
book sent one) with the rest of its state.

A provisioning lease has its ``provisioning_deadline`` and no ``ready_at``; once ready, its
``ready_at`` is where its terms start (``Terms.started_at``; the row's ``started_at`` stays
the trade's) and its fixed length ends ``hours`` after it (``ends_at`` is written back).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.leases import Interruption, Lease, State, Terms, next_due
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason, LeaseFailure
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity

# Members by value: a dict lookup instead of Enum.__call__ for every row read.
_CURRENCIES = {c.value: c for c in Currency}
_BILLING = {b.value: b for b in BillingGranularity}


def _interruption(row: asyncpg.Record) -> Interruption | None:
    if row["interrupt_at"] is None:
        return None
    cause = InterruptionCause(row["interruption_cause"])
    return Interruption(row["interrupt_at"], cause, row["interruption_noticed_at"])


def _lease(row: asyncpg.Record) -> Lease:
    terms = Terms(
        row["id"],
        row["buyer_id"],
        row["seller_id"],
        _CURRENCIES[row["currency"]],
        _CURRENCIES[row["wallet_currency"]],
        row["price_micros"] * row["gpus"],
        _BILLING[row["billing"]],
        row["ready_at"] or row["started_at"],
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
        _interruption(row),
        provisioning_deadline=None if row["ready_at"] else row["provisioning_deadline"],
        failure=None if row["failure"] is None else LeaseFailure(row["failure"]),
        failure_detail=row["failure_detail"],
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


_GET = "SELECT * FROM billing.leases WHERE id = $1 FOR UPDATE"
_COLUMNS = """id, order_id, offer_id, buyer_id, seller_id, gpu, tier, gpus,
                            price_micros, currency, wallet_currency, billing, hours,
                            settle_every_s, started_at, ends_at, held_micros, next_due_at,
                            interrupt_at, interruption_cause, interruption_noticed_at,
                            provisioning_deadline, ready_at"""
"""The columns of a new lease, in the order of ``_row``."""
_INSERT = f"""
INSERT INTO billing.leases ({_COLUMNS})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
        $19, $20, $21, $22, $23)
ON CONFLICT (id) DO NOTHING
RETURNING true
"""  # noqa: S608 - the columns are ours, not input
_ADD_MANY = f"""
INSERT INTO billing.leases ({_COLUMNS})
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                     $7::text[], $8::int4[], $9::int8[], $10::text[], $11::text[], $12::text[],
                     $13::int4[], $14::int4[], $15::timestamptz[], $16::timestamptz[],
                     $17::int8[], $18::timestamptz[], $19::timestamptz[], $20::text[],
                     $21::timestamptz[], $22::timestamptz[], $23::timestamptz[])
ON CONFLICT (id) DO NOTHING
"""  # noqa: S608 - the columns are ours, not input
_SAVE = """
UPDATE billing.leases l SET period = u.period, charged_through = u.charged_through,
       charged_micros = u.charged, paid_micros = u.paid, fee_micros = u.fee,
       seller_micros = u.seller, held_micros = u.held, unpaid_micros = u.unpaid,
       warned = u.warned, ended_at = u.ended_at, end_reason = u.end_reason,
       next_due_at = u.next_due_at, interrupt_at = u.interrupt_at,
       interruption_cause = u.cause, interruption_noticed_at = u.noticed_at,
       ends_at = u.ends_at, ready_at = u.ready_at, failure = u.failure,
       failure_detail = u.failure_detail
  FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int8[], $5::int8[], $6::int8[],
              $7::int8[], $8::int8[], $9::int8[], $10::bool[], $11::timestamptz[], $12::text[],
              $13::timestamptz[], $14::timestamptz[], $15::text[], $16::timestamptz[],
              $17::timestamptz[], $18::timestamptz[], $19::text[], $20::text[])
       AS u (id, period, charged_through, charged, paid, fee, seller, held, unpaid, warned,
             ended_at, end_reason, next_due_at, interrupt_at, cause, noticed_at, ends_at,
             ready_at, failure, failure_detail)
 WHERE l.id = u.id
"""
_SAVE_COLUMNS = 20


def _ready_at(terms: Terms, state: State) -> datetime | None:
    """When the lease became ready: where its terms start (None: it never was)."""
    return terms.started_at if state.provisioning_deadline is None else None


def _interruption_columns(
    interruption: Interruption | None,
) -> tuple[datetime | None, str | None, datetime | None]:
    """``interrupt_at``, ``interruption_cause`` and ``interruption_noticed_at`` (all None:
    no interruption)."""
    if interruption is None:
        return None, None, None
    return interruption.at, interruption.cause.value, interruption.noticed_at


def _row(lease: Lease) -> tuple[object, ...]:
    """A new lease as ``_INSERT`` and ``_ADD_MANY`` take it (with its interruption, when the
    book's came before its trade)."""
    t, s = lease.terms, lease.state
    return (
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
        *_interruption_columns(s.interruption),
        s.provisioning_deadline,
        _ready_at(t, s),
    )


def _state_row(terms: Terms, s: State) -> tuple[object, ...]:
    return (
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
        *_interruption_columns(s.interruption),
        terms.ends_at,
        _ready_at(terms, s),
        None if s.failure is None else s.failure.value,
        s.failure_detail,
    )


class PostgresLeases(PostgresRepository):
    """Leases on the unit of work's connection."""

    async def add(self, lease: Lease) -> bool:
        """Store a new lease; False when it exists already (a replayed trade)."""
        inserted = await self.conn.fetchval(_INSERT, *_row(lease))
        return bool(inserted)

    async def add_many(self, leases: Sequence[Lease]) -> None:
        """Store new leases (one already stored stands), one statement."""
        if leases:
            columns = zip(*(_row(lease) for lease in leases), strict=True)
            await self.conn.execute(_ADD_MANY, *(list(c) for c in columns))

    async def existing(self, lease_ids: Sequence[str]) -> set[str]:
        """Which of these leases were opened already, one query."""
        if not lease_ids:
            return set()
        rows = await self.conn.fetch(
            "SELECT id FROM billing.leases WHERE id = ANY($1::text[])", list(lease_ids)
        )
        return {row["id"] for row in rows}

    async def postpone(self, lease_ids: Sequence[str], until: datetime) -> None:
        """Make running leases due again no sooner than ``until`` (nothing else changes)."""
        if lease_ids:
            await self.conn.execute(
                "UPDATE billing.leases SET next_due_at = greatest(next_due_at, $2)"
                " WHERE id = ANY($1::text[]) AND next_due_at IS NOT NULL",
                list(lease_ids),
                until,
            )

    async def get(self, lease_id: str) -> Lease | None:
        """A lease, locked for this transaction, or None."""
        return await self._one(_GET, lease_id, _lease)

    async def lock(self, lease_ids: Sequence[str]) -> None:
        """Lock these leases for this transaction, in key order: their ids first (an advisory
        lock each, so a lease not opened yet is locked too: the book's interruption and the
        trade that opens the lease then never miss each other), then their rows."""
        if lease_ids:
            # One row per id in the array's order: the locks are taken in key order.
            await self.conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('billing.lease:' || id, 0))"
                " FROM unnest($1::text[]) AS id",
                sorted(set(lease_ids)),
            )
            await self.conn.execute(
                "SELECT 1 FROM billing.leases WHERE id = ANY($1::text[])"
                ' ORDER BY id COLLATE "C" FOR UPDATE',
                list(lease_ids),
            )

    async def due(self, now: datetime, limit: int) -> list[Lease]:
        """Running leases due by ``now``, oldest first, locked (others' locked ones skipped)."""
        rows = await self.conn.fetch(
            "SELECT * FROM billing.leases WHERE next_due_at <= $1 ORDER BY next_due_at"
            " LIMIT $2 FOR UPDATE SKIP LOCKED",
            now,
            limit,
        )
        return [_lease(r) for r in rows]

    async def save(self, changed: Sequence[tuple[Terms, State]]) -> None:
        """Write the states of settled leases back (one statement)."""
        if not changed:
            return
        columns: list[list[object]] = [[] for _ in range(_SAVE_COLUMNS)]
        for terms, state in changed:
            for column, value in zip(columns, _state_row(terms, state), strict=True):
                column.append(value)
        await self.conn.execute(_SAVE, *columns)
