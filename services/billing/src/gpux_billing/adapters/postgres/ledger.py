"""The ledger in PostgreSQL (schema ``billing``): posting, balances, statements, audit.

Implements ``gpux_billing.service.unit_of_work.Ledger`` on the unit of work's connection.
Posting is one statement for a whole batch (``INSERT ... SELECT FROM unnest(...)`` in a
CTE); the database then checks balance, completeness and floors and updates the cached
balances in one statement-level trigger (migrations/0001_ledger.sql). A replay costs one
more query.

Methods run inside the unit's transaction and never commit. A single refused post
(``InsufficientFunds``, a database error) aborts that transaction (one round trip, no
savepoint) unless it is ``isolated`` (a savepoint), e.g. to record a rejection and carry on.
A batch of several transfers always runs in its own savepoint, so a refused batch leaves
nothing behind and the transaction usable.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from decimal import Decimal

import asyncpg

from gpux_billing.adapters.postgres.repository import PostgresRepository
from gpux_billing.domain.audit import Audit, Discrepancy
from gpux_billing.domain.ledger import (
    AccountKey,
    AccountKind,
    Entry,
    FxQuote,
    InsufficientFunds,
    Transfer,
    TransferKind,
    Wallet,
)
from gpux_billing.domain.posting import Posted, batch_results, check_replay, plan_batch
from gpux_billing.domain.statements import Balance, StatementLine, StatementPage, check_limit
from gpux_contracts.money import Currency

INSUFFICIENT_FUNDS = "GX001"
"""SQLSTATE the ledger's trigger raises when a floored balance would go below zero."""
_NO_CURSOR = 2**63 - 1  # above every seq: the first page (a range the index can use)

_POST = """
WITH t AS (
    INSERT INTO billing.transfers
        (id, kind, created_at, reference, fx_base, fx_quote, fx_rate, fx_rate_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[],
                         $5::text[], $6::text[], $7::text[], $8::timestamptz[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), a AS (
    INSERT INTO billing.accounts (owner, currency, kind)
    SELECT DISTINCT owner, currency, kind FROM unnest($11::text[], $12::text[], $13::text[])
        AS u (owner, currency, kind)
    ORDER BY owner, currency, kind
    ON CONFLICT DO NOTHING
), e AS (
    INSERT INTO billing.entries (transfer_id, leg, owner, currency, kind, amount_micros)
    SELECT u.transfer_id, u.leg, u.owner, u.currency, u.kind, u.amount
      FROM unnest($9::text[], $10::int2[], $11::text[], $12::text[], $13::text[], $14::int8[])
           WITH ORDINALITY AS u (transfer_id, leg, owner, currency, kind, amount, n)
      JOIN t ON t.id = u.transfer_id
     ORDER BY u.n
)
SELECT coalesce(array_agg(id), '{}') FROM t
"""

_GET = """
SELECT t.id, t.kind, t.created_at, t.reference, t.fx_base, t.fx_quote, t.fx_rate, t.fx_rate_at,
       array_agg(e.owner ORDER BY e.leg) AS owners,
       array_agg(e.currency ORDER BY e.leg) AS currencies,
       array_agg(e.kind ORDER BY e.leg) AS kinds,
       array_agg(e.amount_micros ORDER BY e.leg) AS amounts
  FROM billing.transfers t
  JOIN billing.entries e ON e.transfer_id = t.id
 WHERE t.id = ANY($1::text[])
 GROUP BY t.id
"""


def _arrays(transfers: Sequence[Transfer]) -> list[list[object]]:
    """The batch as column arrays: 8 of transfers, then 6 of entries (with their leg 1..n)."""
    columns: list[list[object]] = [[] for _ in range(14)]
    for t in transfers:
        fx = t.fx
        header: tuple[object, ...] = (
            t.id,
            t.kind.value,
            t.created_at,
            t.reference,
            None if fx is None else fx.base.value,
            None if fx is None else fx.quote.value,
            None if fx is None else fx.rate_text,
            None if fx is None else fx.rate_at,
        )
        for column, value in zip(columns[:8], header, strict=True):
            column.append(value)
        for leg, e in enumerate(t.entries, start=1):
            row: tuple[object, ...] = (
                t.id,
                leg,
                e.account.owner,
                e.account.currency.value,
                e.account.kind.value,
                e.amount_micros,
            )
            for column, cell in zip(columns[8:], row, strict=True):
                column.append(cell)
    return columns


def _transfer(row: asyncpg.Record) -> Transfer:
    fx = None
    if row["fx_rate"] is not None:
        fx = FxQuote(
            Currency(row["fx_base"]),
            Currency(row["fx_quote"]),
            Decimal(row["fx_rate"]),
            row["fx_rate_at"],
        )
    entries = tuple(
        Entry(AccountKey(owner, Currency(currency), AccountKind(kind)), amount)
        for owner, currency, kind, amount in zip(
            row["owners"], row["currencies"], row["kinds"], row["amounts"], strict=True
        )
    )
    return Transfer(
        row["id"], TransferKind(row["kind"]), entries, row["created_at"], fx, row["reference"]
    )


def _insufficient(error: asyncpg.PostgresError) -> InsufficientFunds:
    detail = json.loads(getattr(error, "detail", None) or "{}")
    account = AccountKey(detail["owner"], Currency(detail["currency"]), AccountKind(detail["kind"]))
    return InsufficientFunds(account, int(detail["balance_micros"]), int(detail["delta_micros"]))


_WALLET_BALANCES = """
SELECT a.owner, a.currency, a.kind, a.balance_micros FROM billing.accounts a
  JOIN unnest($1::text[], $2::text[]) AS w (owner, currency)
    ON a.owner = w.owner AND a.currency = w.currency
 WHERE a.kind IN ('available', 'held')
"""
_LOCK_AVAILABLE = """
SELECT a.owner, a.currency, a.balance_micros FROM billing.accounts a
  JOIN unnest($1::text[], $2::text[]) AS k (owner, currency)
    ON a.owner = k.owner AND a.currency = k.currency AND a.kind = 'available'
 ORDER BY a.owner COLLATE "C", a.currency COLLATE "C" FOR UPDATE OF a
"""
_LOCK_OWNERS = """
SELECT 1 FROM billing.accounts
 WHERE owner = ANY($1::text[]) AND kind = 'available'
 ORDER BY owner COLLATE "C", currency COLLATE "C" FOR UPDATE
"""
_STATEMENT = """
SELECT e.seq, e.transfer_id, t.kind AS transfer_kind, t.created_at, e.kind, e.amount_micros,
       t.reference
  FROM billing.entries e JOIN billing.transfers t ON t.id = e.transfer_id
 WHERE e.owner = $1 AND e.currency = $2 AND e.seq < coalesce($3::bigint, $5)
 ORDER BY e.seq DESC LIMIT $4
"""
_DISCREPANCIES = """
SELECT coalesce(a.owner, s.owner) AS owner, coalesce(a.currency, s.currency) AS currency,
       coalesce(a.kind, s.kind) AS kind, coalesce(a.balance_micros, 0) AS cached,
       coalesce(s.total, 0) AS total
  FROM billing.accounts a
  FULL JOIN (SELECT owner, currency, kind, sum(amount_micros) AS total
               FROM billing.entries GROUP BY owner, currency, kind) s
 USING (owner, currency, kind)
 WHERE coalesce(a.balance_micros, 0) <> coalesce(s.total, 0)
"""
_UNBALANCED = """
SELECT DISTINCT transfer_id FROM billing.entries
 GROUP BY transfer_id, currency HAVING sum(amount_micros) <> 0
"""
_MALFORMED = """
SELECT t.id FROM billing.transfers t
  LEFT JOIN (SELECT transfer_id, min(leg) AS first, max(leg) AS last, count(*) AS n,
                    array_agg(DISTINCT currency) AS currencies
               FROM billing.entries GROUP BY transfer_id) e
    ON e.transfer_id = t.id
 WHERE e.transfer_id IS NULL OR e.first <> 1 OR e.last <> e.n
    OR cardinality(e.currencies) > 2
    OR (cardinality(e.currencies) = 2) <> (t.fx_base IS NOT NULL)
    OR (t.fx_base IS NOT NULL AND NOT e.currencies @> ARRAY[t.fx_base, t.fx_quote])
"""
_BELOW_FLOOR = """
SELECT owner, currency, kind FROM billing.accounts
 WHERE kind NOT IN ('platform_revenue', 'fx_house', 'topup_clearing') AND balance_micros < 0
"""
_TOTALS = "SELECT currency, sum(amount_micros) AS total FROM billing.entries GROUP BY 1"


def _key(row: asyncpg.Record) -> AccountKey:
    return AccountKey(row["owner"], Currency(row["currency"]), AccountKind(row["kind"]))


class PostgresLedger(PostgresRepository):
    """The ledger on one connection, inside its unit of work's transaction."""

    async def post(self, transfer: Transfer, *, isolated: bool = False) -> Posted:
        """Post one transfer; an identical replay returns the stored original (``replayed``).

        Raises ``TransferMismatch`` when the id was posted with other fields and
        ``InsufficientFunds`` when a floored balance would go below zero.
        """
        return (await self.post_many([transfer], isolated=isolated))[0]

    async def post_many(
        self, transfers: Sequence[Transfer], *, isolated: bool = False
    ) -> list[Posted]:
        """Post a batch in one statement, all or nothing; results in the order given.

        A batch of several transfers (or an ``isolated`` one) runs in a savepoint: when one
        of its ids turns out to be a changed replay after the others were inserted, they are
        undone with it, and the transaction stays usable.
        """
        if not transfers:
            return []
        unique, positions = plan_batch(transfers)
        if len(unique) == 1 and not isolated:
            return batch_results(unique, positions, await self._post(unique))
        async with self.conn.transaction():
            return batch_results(unique, positions, await self._post(unique))

    async def _post(self, unique: Sequence[Transfer]) -> dict[str, Posted]:
        try:
            inserted = set(await self.conn.fetchval(_POST, *_arrays(unique)))
        except asyncpg.PostgresError as error:
            if getattr(error, "sqlstate", None) == INSUFFICIENT_FUNDS:
                raise _insufficient(error) from error
            raise
        outcomes = {t.id: Posted(t, replayed=False) for t in unique if t.id in inserted}
        replays = [t for t in unique if t.id not in inserted]
        if replays:
            rows = await self.conn.fetch(_GET, [t.id for t in replays])
            stored = {row["id"]: _transfer(row) for row in rows}
            for t in replays:
                outcomes[t.id] = check_replay(stored[t.id], t)
        return outcomes

    async def get(self, transfer_id: str) -> Transfer | None:
        """A posted transfer, or None."""
        return await self._one(_GET, [transfer_id], _transfer)

    async def balance(self, account: AccountKey) -> int:
        """An account's balance in micro-units (0 for an account never used)."""
        value = await self.conn.fetchval(
            "SELECT balance_micros FROM billing.accounts WHERE owner = $1 AND currency = $2"
            " AND kind = $3",
            account.owner,
            account.currency.value,
            account.kind.value,
        )
        return 0 if value is None else int(value)

    async def wallet_balances(self, wallets: Sequence[Wallet]) -> dict[Wallet, tuple[int, int]]:
        """(available, held) micro-units of each wallet (0 for an account never used), one query."""
        rows = await self.conn.fetch(
            _WALLET_BALANCES, [w[0] for w in wallets], [w[1].value for w in wallets]
        )
        found = {(r["owner"], r["currency"], r["kind"]): int(r["balance_micros"]) for r in rows}
        return {
            (owner, currency): (
                found.get((owner, currency.value, "available"), 0),
                found.get((owner, currency.value, "held"), 0),
            )
            for owner, currency in wallets
        }

    async def lock_available(self, wallets: Iterable[Wallet]) -> dict[Wallet, int]:
        """Lock the wallets' available balances (in key order) and return them (0 if none yet)."""
        keys = sorted({(owner, currency.value) for owner, currency in wallets})
        rows = await self.conn.fetch(_LOCK_AVAILABLE, [k[0] for k in keys], [k[1] for k in keys])
        found = {(r["owner"], r["currency"]): int(r["balance_micros"]) for r in rows}
        return {(owner, Currency(c)): found.get((owner, c), 0) for owner, c in keys}

    async def lock_owners(self, owners: Sequence[str]) -> None:
        """Lock every available balance of these owners (key order, as ``lock_available``)."""
        if owners:
            await self.conn.execute(_LOCK_OWNERS, list(owners))

    async def wallets(self) -> list[Wallet]:
        """Every wallet that has an available or a held account."""
        rows = await self.conn.fetch(
            "SELECT DISTINCT owner, currency FROM billing.accounts"
            " WHERE kind IN ('available', 'held')"
        )
        return [(r["owner"], Currency(r["currency"])) for r in rows]

    async def balances(self, owner: str) -> list[Balance]:
        """Every account of an owner, ordered by currency and kind."""
        rows = await self.conn.fetch(
            "SELECT currency, kind, balance_micros FROM billing.accounts WHERE owner = $1",
            owner,
        )
        found = [
            Balance(
                AccountKey(owner, Currency(r["currency"]), AccountKind(r["kind"])),
                r["balance_micros"],
            )
            for r in rows
        ]
        return sorted(found, key=lambda b: b.account)

    async def statement(
        self, owner: str, currency: Currency, cursor: int | None = None, limit: int = 50
    ) -> StatementPage:
        """An owner's entries in one currency (all its kinds), newest first, paginated by seq."""
        check_limit(cursor, limit)
        rows = await self.conn.fetch(
            _STATEMENT, owner, Currency(currency).value, cursor, limit + 1, _NO_CURSOR
        )
        lines = tuple(
            StatementLine(
                r["seq"],
                r["transfer_id"],
                TransferKind(r["transfer_kind"]),
                r["created_at"],
                AccountKind(r["kind"]),
                r["amount_micros"],
                r["reference"],
            )
            for r in rows[:limit]
        )
        return StatementPage(lines, lines[-1].seq if len(rows) > limit else None)

    async def verify(self) -> Audit:
        """Recompute every balance from the entries (a full scan) and check every invariant."""
        conn = self.conn
        discrepancies = sorted(
            (
                Discrepancy(_key(r), int(r["cached"]), int(r["total"]))
                for r in await conn.fetch(_DISCREPANCIES)
            ),
            key=lambda d: d.account,
        )
        unbalanced = sorted(r["transfer_id"] for r in await conn.fetch(_UNBALANCED))
        malformed = sorted(r["id"] for r in await conn.fetch(_MALFORMED))
        below = sorted(_key(r) for r in await conn.fetch(_BELOW_FLOOR))
        totals = sorted(
            (Currency(r["currency"]), int(r["total"])) for r in await conn.fetch(_TOTALS)
        )
        return Audit(
            tuple(discrepancies), tuple(unbalanced), tuple(malformed), tuple(below), tuple(totals)
        )
