"""The database itself keeps the ledger's invariants, even against SQL that bypasses the adapter.

Each test runs in a transaction that is rolled back; refusals are expected inside savepoints.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain import transfers
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_billing.domain.transfers import Sale
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_devinfra.testing.database import rolled_back
from gpux_platform.settings import GpuxSettings

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)

# A transfer and its entries in one raw statement, as a buggy caller could write it.
RAW_POST = """
WITH t AS (
    INSERT INTO billing.transfers (id, kind, created_at) VALUES ($1, $2, now()) RETURNING id
)
INSERT INTO billing.entries (transfer_id, leg, owner, currency, kind, amount_micros)
SELECT t.id, v.leg, v.owner, v.currency, v.kind, v.amount
  FROM t, unnest($3::int2[], $4::text[], $5::text[], $6::text[], $7::int8[])
       AS v (leg, owner, currency, kind, amount)
"""


@pytest.fixture
async def conn(billing_pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    async with rolled_back(billing_pool) as connection:
        yield connection


@pytest.fixture
def owner() -> str:
    return "d" + new_id()[-10:]


async def refused(conn: asyncpg.Connection, sql: str, *args: object) -> asyncpg.PostgresError:
    """Run SQL that the database must refuse; returns the error."""
    with pytest.raises(asyncpg.PostgresError) as caught:
        async with conn.transaction():
            await conn.execute(sql, *args)
    return caught.value


Leg = tuple[str, str, str, int]
"""owner, currency, kind, amount"""


def raw_args(transfer_id: str, kind: str, legs: list[Leg]) -> tuple[object, ...]:
    """The arguments of ``RAW_POST`` for one transfer of ``legs``, numbered from 1."""
    columns = [[leg[column] for leg in legs] for column in range(4)]
    return (transfer_id, kind, list(range(1, len(legs) + 1)), *columns)


async def raw_post(conn: asyncpg.Connection, transfer_id: str, kind: str, legs: list[Leg]) -> None:
    await conn.execute(RAW_POST, *raw_args(transfer_id, kind, legs))


async def accounts(conn: asyncpg.Connection, owner: str) -> None:
    await conn.execute(
        "INSERT INTO billing.accounts (owner, currency, kind) VALUES ($1, 'USD', 'available'),"
        " ($1, 'USD', 'held'), ('platform', 'USD', 'topup_clearing') ON CONFLICT DO NOTHING",
        owner,
    )


async def test_a_raw_insert_cannot_overdraw_an_available_balance(
    conn: asyncpg.Connection, owner: str
) -> None:
    await PostgresLedger(conn).post(transfers.topup(f"{owner}-t", owner, "USD", 5, NOW))
    await accounts(conn, owner)
    overdrawn = [(owner, "USD", "available", -6), (owner, "USD", "held", 6)]
    error = await refused(conn, RAW_POST, *raw_args(f"{owner}-h", "hold", overdrawn))
    assert error.sqlstate == "GX001"
    assert '"balance_micros" : 5' in (error.detail or "")
    # Exactly what is there is fine; then held cannot be overdrawn either.
    await raw_post(
        conn, f"{owner}-h", "hold", [(owner, "USD", "available", -5), (owner, "USD", "held", 5)]
    )
    overdrawn = [(owner, "USD", "held", -6), (owner, "USD", "available", 6)]
    error = await refused(conn, RAW_POST, *raw_args(f"{owner}-r", "release", overdrawn))
    assert error.sqlstate == "GX001"
    assert (await PostgresLedger(conn).verify()).ok


async def test_the_balance_floor_is_a_check_constraint_too(conn: asyncpg.Connection) -> None:
    constraint = await conn.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conname = 'accounts_balance_floor'"
    )
    assert "balance_micros >= 0" in constraint


async def test_unbalanced_or_malformed_transfers_are_refused(
    conn: asyncpg.Connection, owner: str
) -> None:
    await accounts(conn, owner)
    unbalanced = [("platform", "USD", "topup_clearing", -5), (owner, "USD", "available", 6)]
    error = await refused(conn, RAW_POST, f"{owner}-1", "topup", [1, 2],
                          *map(list, zip(*unbalanced, strict=True)))  # fmt: skip
    assert error.sqlstate == "GX002"
    repeated = [(owner, "USD", "held", -5), (owner, "USD", "held", 5)]
    error = await refused(conn, RAW_POST, f"{owner}-2", "hold", [1, 2],
                          *map(list, zip(*repeated, strict=True)))  # fmt: skip
    assert error.sqlstate == "GX003"
    gapped = [("platform", "USD", "topup_clearing", -5), (owner, "USD", "available", 5)]
    error = await refused(conn, RAW_POST, f"{owner}-3", "topup", [1, 3],
                          *map(list, zip(*gapped, strict=True)))  # fmt: skip
    assert error.sqlstate == "GX003"
    unknown = [("platform", "USD", "topup_clearing", -5), (f"{owner}x", "USD", "available", 5)]
    error = await refused(conn, RAW_POST, f"{owner}-4", "topup", [1, 2],
                          *map(list, zip(*unknown, strict=True)))  # fmt: skip
    assert error.sqlstate == "GX003"
    two_currencies = [("platform", "USD", "topup_clearing", -5), (owner, "EUR", "available", 5)]
    error = await refused(conn, RAW_POST, f"{owner}-5", "topup", [1, 2],
                          *map(list, zip(*two_currencies, strict=True)))  # fmt: skip
    assert error.sqlstate in {"GX002", "GX003"}


async def test_a_transfer_cannot_exist_without_entries_nor_gain_entries_later(
    conn: asyncpg.Connection, owner: str
) -> None:
    error = await refused(
        conn, "INSERT INTO billing.transfers (id, kind, created_at) VALUES ($1, 'hold', now())",
        f"{owner}-alone",
    )  # fmt: skip
    assert isinstance(error, asyncpg.ForeignKeyViolationError)
    await PostgresLedger(conn).post(transfers.topup(f"{owner}-t", owner, "USD", 5, NOW))
    await accounts(conn, owner)
    error = await refused(
        conn,
        "INSERT INTO billing.entries (transfer_id, leg, owner, currency, kind, amount_micros)"
        " VALUES ($1, 3, $2, 'USD', 'available', -5), ($1, 4, $2, 'USD', 'held', 5)",
        f"{owner}-t",
        owner,
    )
    assert error.sqlstate == "GX003"  # legs must start at 1, and leg 1 is taken
    error = await refused(
        conn,
        "INSERT INTO billing.entries (transfer_id, leg, owner, currency, kind, amount_micros)"
        " VALUES ($1, 1, $2, 'USD', 'available', -5), ($1, 2, $2, 'USD', 'held', 5)",
        f"{owner}-t",
        owner,
    )
    assert isinstance(error, asyncpg.UniqueViolationError)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE billing.entries SET amount_micros = amount_micros + 1",
        "UPDATE billing.entries SET amount_micros = 1 WHERE false",
        "DELETE FROM billing.entries",
        "TRUNCATE billing.entries CASCADE",
        "UPDATE billing.transfers SET reference = 'edited'",
        "DELETE FROM billing.transfers",
        "TRUNCATE billing.transfers CASCADE",
        "UPDATE billing.accounts SET balance_micros = balance_micros + 1",
        "DELETE FROM billing.accounts",
    ],
)
async def test_ledger_rows_are_immutable(conn: asyncpg.Connection, owner: str, sql: str) -> None:
    await PostgresLedger(conn).post(transfers.topup(f"{owner}-t", owner, "USD", 5, NOW))
    error = await refused(conn, sql)
    assert error.sqlstate == "GX004"
    audit = await PostgresLedger(conn).verify()
    assert audit.ok


async def test_verify_reports_what_the_constraints_would_have_stopped(
    conn: asyncpg.Connection, owner: str
) -> None:
    await PostgresLedger(conn).post(transfers.topup(f"{owner}-t", owner, "USD", 5, NOW))
    assert (await PostgresLedger(conn).verify()).ok
    # Switch the guards off in this transaction only (as a broken migration might) and
    # corrupt a cached balance: the audit, which recomputes from entries, notices.
    await conn.execute("ALTER TABLE billing.accounts DISABLE TRIGGER accounts_guarded")
    await conn.execute(
        "UPDATE billing.accounts SET balance_micros = 7 WHERE owner = $1 AND kind = 'available'",
        owner,
    )
    audit = await PostgresLedger(conn).verify()
    assert not audit.ok
    assert [(d.account.owner, d.cached_micros, d.entries_micros) for d in audit.discrepancies] == [
        (owner, 7, 5)
    ]
    assert audit.totals == tuple(sorted(audit.totals))
    assert dict(audit.totals)[Currency.USD] == 0


async def test_concurrent_posters_neither_deadlock_nor_lose_updates(
    gpux_settings: GpuxSettings, billing_pool: asyncpg.Pool
) -> None:
    """Four connections post charges to shared sellers and platform accounts, committing."""
    dsn = gpux_settings.database_url.get_secret_value()
    tag = "k" + new_id()[-8:]
    buyers = [f"{tag}b{i}" for i in range(4)]
    sellers = [f"{tag}s{i}" for i in range(2)]
    revenue = transfers.platform_account(Currency.USD, AccountKind.PLATFORM_REVENUE)
    async with billing_pool.acquire() as conn, conn.transaction():
        topups = [transfers.topup(f"{b}-t", b, Currency.USD, 1_000_000, NOW) for b in buyers]
        await PostgresLedger(conn).post_many(topups)
        revenue_before = await PostgresLedger(conn).balance(revenue)

    async def poster(i: int) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            for n in range(20):
                # Sellers in alternating order: the trigger must still lock in one order.
                batch = [
                    transfers.charge(
                        f"{buyers[i]}-c{n}-{k}",
                        Sale(buyers[i], sellers[(n + k + i) % 2], Currency.USD, 1_000),
                        1000,
                        NOW,
                        source=AccountKind.AVAILABLE,
                    )
                    for k in range(2)
                ]
                async with conn.transaction():
                    await PostgresLedger(conn).post_many(batch)
        finally:
            await conn.close()

    await asyncio.gather(*(poster(i) for i in range(4)))
    async with billing_pool.acquire() as conn:
        for buyer in buyers:
            wallet = AccountKey(buyer, Currency.USD, AccountKind.AVAILABLE)
            assert await PostgresLedger(conn).balance(wallet) == 1_000_000 - 40 * 1_000
        payable = [
            await PostgresLedger(conn).balance(
                AccountKey(s, Currency.USD, AccountKind.SELLER_PAYABLE)
            )
            for s in sellers
        ]
        assert sum(payable) == 4 * 40 * 900
        assert await PostgresLedger(conn).balance(revenue) - revenue_before == 4 * 40 * 100
        assert (await PostgresLedger(conn).verify()).ok
