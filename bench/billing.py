"""Billing benchmark: one settlement tick over many running per-second leases.

    uv run python bench/billing.py [--leases 1000,10000,100000] [--batch B] [--naive N]
                                   [--events batched|per_lease] [--db URL] [--profile]

For each size, a scratch database gets billing's migrations and is seeded in a few
set-based statements (no Python per row): one buyer per lease with a USD top-up on the
ledger (transfers and entries inserted by one statement, so the ledger's trigger keeps the
cached balances), 100 sellers, and the leases themselves, per-second, each with exactly one
60-second period due at the tick's instant. Then one full settlement runs the way the
settlement loop does (``gpux_billing.service.settlement.settle_due`` in batches of
``--batch``, the configured ``settle_batch`` by default, one unit of work per batch, until a
batch comes back short), timed with ``time.perf_counter``. The Redis refresh the loop does
after each batch is not part of it. Prints leases settled per second and the cost per lease
in µs, the outbox events written per lease (``--events batched``, the default: one
``leases.settled`` and one ``ledger.batch_posted`` per 500 leases, plus a ``balance.changed``
per wallet, which here is one per lease; ``per_lease``: also a ``lease.charged`` and a
``ledger.posted`` per charge), round trips and SQL statements per batch (counted by a wrapper
around the connection; ``executemany`` is one round trip of one statement per row), the time
spent waiting on PostgreSQL against the time in Python, and a check that every lease was
charged exactly once and the ledger's audit is clean. The machine's load average is printed
first: the box is shared.

The peer, measured in the same run: a naive settlement that calls the same code once per
lease (``settlement.settle`` with one lease: its own rate read, balance lock, one-transfer
post, one-row UPDATE, outbox and balance event writes, its events per lease), so it does the
same work with a round trip per step per lease. It runs on ``--naive`` leases (1,000 by
default, a fresh database); for larger sizes its time is extrapolated linearly from that run
and marked so. Not a timed test: it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.adapters.postgres.unit_of_work import PostgresBillingUnitOfWork
from gpux_billing.config import BillingSettings
from gpux_billing.domain.leases import Policy
from gpux_billing.domain.rules import Rules
from gpux_billing.service import settlement
from gpux_contracts.ids import new_id
from gpux_devinfra.testing.scratch import scratch_database
from gpux_platform import migrations
from gpux_platform.clock import ManualClock

MIGRATIONS = Path(__file__).resolve().parents[1] / "services" / "billing" / "migrations"
LOCAL_DB = "postgresql://gpux:gpux@127.0.0.1:25432/gpux"
SELLERS = 100
PERIOD_S = 60
TARGET_S = 5.0
STRETCH_S = 1.0
TARGET_LEASES = 100_000
T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)  # the tick's instant


@dataclass
class Counting:
    """Wraps a connection: counts round trips and statements, and the time awaiting them."""

    conn: asyncpg.Connection
    round_trips: int = 0
    statements: int = 0
    waited_s: float = 0.0
    by_sql: Counter[str] = field(default_factory=Counter)
    sql_s: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    async def _call(self, method: str, sql: str, *args: Any, rows: int = 1) -> Any:
        self.round_trips += 1
        self.statements += rows
        label = " ".join(sql.split())[:60]
        self.by_sql[label] += rows
        started = time.perf_counter()
        try:
            return await getattr(self.conn, method)(sql, *args)
        finally:
            spent = time.perf_counter() - started
            self.waited_s += spent
            self.sql_s[label] += spent

    async def execute(self, sql: str, *args: Any) -> Any:
        return await self._call("execute", sql, *args)

    async def executemany(self, sql: str, args: list[Any]) -> Any:
        return await self._call("executemany", sql, args, rows=len(args))

    async def fetch(self, sql: str, *args: Any) -> Any:
        return await self._call("fetch", sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self._call("fetchrow", sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._call("fetchval", sql, *args)

    def transaction(self) -> Any:
        self.round_trips += 2  # SAVEPOINT and RELEASE
        self.statements += 2
        return self.conn.transaction()


@dataclass
class Result:
    """One settlement run."""

    leases: int
    seconds: float
    batches: int
    round_trips: int
    statements: int
    waited_s: float
    by_sql: Counter[str]
    sql_s: defaultdict[str, float]
    events: int = 0
    """Outbox rows the run wrote."""

    @property
    def per_second(self) -> float:
        return self.leases / self.seconds

    @property
    def us_per_lease(self) -> float:
        return self.seconds / self.leases * 1e6


async def _seed(pool: asyncpg.Pool, n: int) -> None:
    """Buyers with USD top-ups on the ledger, and ``n`` per-second leases due at ``T0``."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO billing.accounts (owner, currency, kind)"
            " SELECT 'buyer-' || lpad(i::text, 7, '0'), 'USD', 'available'"
            "   FROM generate_series(1, $1) i"
            " UNION ALL SELECT 'platform', 'USD', 'topup_clearing'",
            n,
        )
        # A transfer and its entries in one statement (the ledger's foreign keys want that).
        await conn.execute(
            "WITH t AS (INSERT INTO billing.transfers (id, kind, created_at, reference)"
            "   SELECT 'topup:b' || i, 'topup', $2, 'bench' FROM generate_series(1, $1) i)"
            " INSERT INTO billing.entries (transfer_id, leg, owner, currency, kind, amount_micros)"
            " SELECT 'topup:b' || i, leg,"
            "        CASE leg WHEN 1 THEN 'platform' ELSE 'buyer-' || lpad(i::text, 7, '0') END,"
            "        'USD', CASE leg WHEN 1 THEN 'topup_clearing' ELSE 'available' END,"
            "        CASE leg WHEN 1 THEN -100000000 ELSE 100000000 END"
            "   FROM generate_series(1, $1) i, generate_series(1, 2) leg",
            n,
            T0 - timedelta(days=1),
        )
        await conn.execute(
            "INSERT INTO billing.leases (id, order_id, offer_id, buyer_id, seller_id, gpu, tier,"
            " gpus, price_micros, currency, wallet_currency, billing, hours, settle_every_s,"
            " started_at, ends_at, held_micros, next_due_at)"
            " SELECT 'lease-' || lpad(i::text, 7, '0'), 'order-' || i, 'offer-' || (i % $2),"
            "        'buyer-' || lpad(i::text, 7, '0'), 'seller-' || (i % $2), 'h100',"
            "        'on_demand', 1 + i % 4, 500000 + (i % 50) * 10000, 'USD', 'USD', 'second',"
            "        NULL, $3, s, NULL, 0, s + make_interval(secs => $3)"
            "   FROM generate_series(1, $1) i,"
            "        LATERAL (SELECT $4::timestamptz - make_interval(secs => $3 + i % 30))"
            "        AS x (s)",
            n,
            SELLERS,
            PERIOD_S,
            T0,
        )
    async with pool.acquire() as conn:
        await conn.execute("VACUUM ANALYZE billing.leases")
        await conn.execute("VACUUM ANALYZE billing.accounts")


class OneConnection:
    """A pool of the one counted connection, for the unit of work (which acquires its own)."""

    def __init__(self, conn: Counting) -> None:
        self._conn = conn

    async def acquire(self) -> Counting:
        return self._conn

    async def release(self, conn: Counting) -> None:
        pass


async def _settle(pool: asyncpg.Pool, rules: Rules, batch: int, naive: bool) -> Result:
    """One tick: batches until a short one, each in its own unit of work (as the loop does)."""
    async with pool.acquire() as raw:
        counting = Counting(raw)
        one = cast(asyncpg.Pool, OneConnection(counting))
        clock = ManualClock(T0)
        total, batches = 0, 0
        started = time.perf_counter()
        while True:
            async with PostgresBillingUnitOfWork(one, rules=rules, clock=clock) as uow:
                if naive:
                    leases = await uow.leases.due(T0, batch)
                    for lease in leases:
                        await settlement.settle(uow, [lease], T0, None)
                    seen = len(leases)
                else:
                    seen = (await settlement.settle_due(uow, batch)).looked_at
                await uow.commit()
            batches += 1
            total += seen
            if seen < batch:
                break
        seconds = time.perf_counter() - started
    return Result(
        total,
        seconds,
        batches,
        counting.round_trips,
        counting.statements,
        counting.waited_s,
        counting.by_sql,
        counting.sql_s,
    )


async def _check(pool: asyncpg.Pool, n: int, audit: bool) -> tuple[int, str]:
    """(outbox rows, a summary): every lease charged once, the audit clean if asked."""
    async with pool.acquire() as conn:
        charged = await conn.fetchval(
            "SELECT count(*) FROM billing.transfers WHERE kind = 'charge'"
        )
        settled = await conn.fetchval("SELECT count(*) FROM billing.leases WHERE period = 1")
        events = await conn.fetchval("SELECT count(*) FROM billing.outbox")
        assert charged == n, f"{charged} charges for {n} leases"
        assert settled == n, f"{settled} of {n} leases settled"
        verdict = ""
        if audit:
            result = await PostgresLedger(conn).verify()
            assert result.ok, result
            verdict = ", audit clean"
        return events, f"{charged} charges, {events} outbox rows{verdict}"


async def _measure(
    url: str, n: int, rules: Rules, *, batch: int, naive: bool, profile: bool
) -> tuple[Result, str]:
    name = f"gpux_bench_{'naive' if naive else 'batched'}_{new_id()[-8:].lower()}"
    async with (
        scratch_database(url, name) as database_url,
        scratch_pool(database_url) as pool,
    ):
        seeding = time.perf_counter()
        await _seed(pool, n)
        seeded_s = time.perf_counter() - seeding
        print(f"  seeded {n:,} leases in {seeded_s:.1f} s", file=sys.stderr)
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        result = await _settle(pool, rules, batch, naive)
        if profiler is not None:
            profiler.disable()
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats(os.environ.get("BENCH_SORT", "cumtime")).print_stats(45)
        result.events, check = await _check(pool, n, audit=n <= 10_000)
        return result, check


@contextlib.asynccontextmanager
async def scratch_pool(
    database_url: str, schema: str = "billing", folder: Path = MIGRATIONS
) -> AsyncIterator[asyncpg.Pool]:
    """A small pool on a scratch database with a service's migrations applied (billing's by
    default; the other benches pass their own)."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    assert pool is not None
    try:
        await migrations.apply(pool, schema, folder)
        yield pool
    finally:
        await pool.close()


def _row(label: str, n: int, r: Result, extrapolated: bool = False) -> str:
    mark = "*" if extrapolated else ""
    per_batch = f"{r.round_trips / r.batches:,.0f} / {r.statements / r.batches:,.0f}"
    python_s = r.seconds - r.waited_s
    return (
        f"| {n:>9,} | {label:<8} | {r.seconds:>8.2f}{mark} | {n / r.seconds:>12,.0f}{mark} |"
        f" {r.us_per_lease:>7,.0f}{mark} | {r.events / r.leases:>6.3f} | {r.batches:>7} |"
        f" {per_batch:>17} | {r.waited_s:>6.2f} | {python_s:>6.2f} |"
    )


def _arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leases", default="1000,10000,100000", help="comma-separated sizes")
    defaults = BillingSettings.model_fields
    parser.add_argument("--batch", type=int, default=defaults["settle_batch"].default)
    parser.add_argument("--naive", type=int, default=1000, help="leases the naive peer settles")
    parser.add_argument(
        "--events",
        choices=["batched", "per_lease"],
        default=defaults["settlement_events"].default,
        help="how the loop announces charges (GPUX_SETTLEMENT_EVENTS)",
    )
    parser.add_argument("--db", default=os.environ.get("GPUX_DATABASE_URL", LOCAL_DB))
    parser.add_argument("--profile", action="store_true", help="cProfile the batched runs")
    parser.add_argument("--show-sql", action="store_true", help="statements by SQL text")
    return parser.parse_args()


def _rules(events: str) -> Rules:
    """The service's default settings, with the bench's settlement period and event form."""
    defaults = BillingSettings.model_fields
    policy = Policy(
        fee_bps=defaults["fee_bps"].default,
        runway_s=defaults["runway_s"].default,
        batched_events=events == "batched",
    )
    return Rules(lease=policy, settle_every_s=PERIOD_S)


def _peer(naive: Result, n: int, batch: int) -> Result:
    """The naive run scaled linearly to ``n`` leases."""
    scale = n / naive.leases
    return Result(
        n,
        naive.seconds * scale,
        max(1, -(-n // batch)),
        round(naive.round_trips * scale),
        round(naive.statements * scale),
        naive.waited_s * scale,
        naive.by_sql,
        naive.sql_s,
        round(naive.events * scale),
    )


def _show_sql(result: Result) -> None:
    """Statements by SQL text: how many, and the time awaiting them."""
    for sql, count in result.by_sql.most_common():
        print(f"    {count:>8,} {result.sql_s[sql]:>7.3f} s  {sql}", file=sys.stderr)


async def main() -> None:
    args = _arguments()
    sizes = [int(s.replace("_", "")) for s in args.leases.split(",")]
    rules = _rules(args.events)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"batch size {args.batch:,}; events {args.events}; naive peer on {args.naive:,} leases;"
        f" load average {load}",
        file=sys.stderr,
    )
    naive, naive_check = await _measure(
        args.db, args.naive, rules, batch=args.batch, naive=True, profile=False
    )
    print(f"  naive: {naive_check}", file=sys.stderr)
    lines = [
        "| leases | path | seconds | leases/s | µs/lease | events/lease | batches"
        " | round trips / statements per batch | DB wait s | Python s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        result, check = await _measure(
            args.db, n, rules, batch=args.batch, naive=False, profile=args.profile
        )
        print(f"  {n:,}: {check}", file=sys.stderr)
        if args.show_sql:
            _show_sql(result)
        lines.append(_row("batched", n, result))
        extrapolated = n != naive.leases
        peer = _peer(naive, n, args.batch) if extrapolated else naive
        lines.append(_row("naive", n, peer, extrapolated))
        ratio = result.per_second / naive.per_second
        lines.append(f"| | **ratio** | | **{ratio:.1f}×** | | | | | | |")
    print("\n".join(lines))
    if TARGET_LEASES in sizes:
        print(
            f"\ntarget: {TARGET_LEASES:,} leases in one tick in under {TARGET_S:.0f} s"
            f" (stretch: {STRETCH_S:.0f} s)",
            file=sys.stderr,
        )
    print("* extrapolated linearly from the naive run's leases/s", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
