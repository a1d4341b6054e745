"""Billing survives SIGKILL while leases run: the ledger equals that of an uninterrupted run.

Two runs of ``python -m gpux_billing`` get the same input at the same time, each in a fresh
database and namespace, with the same fast clock (``SPEED`` times the wall clock from one
epoch, so an hour passes in 40 s): run A is SIGKILLed ``KILLS`` times while its leases run,
each time inside a batch of consumed records, and restarted each time; run B is left alone.

The input: a USD/EUR rate; one credit and one funded order per buyer; then ``LEASES``
one-hour trades (half billed per second, half per started hour, a quarter paid from EUR
wallets at the stored rate, start times staggered); then stop requests for a third of them,
at instants far enough ahead that billing handles each before its clock gets there (a stop
handled late ends at the last settled instant instead, and the ledger would legitimately
differ). Before each kill, a burst of ``EXTRA`` small credits goes to both runs, so that
billing.commands is consumed in large batches; run A is killed at a seeded point into the
burst, at a moment when one of its units of work has claimed records in the inbox and not
committed yet (its row lock on ``billing.inbox`` is seen in ``pg_locks``). Every envelope is
built once and published to both runs, and every instant is set by the test relative to the
shared epoch, so both runs must post the very same transfers.

At the end, in both runs every lease has ended and ``PostgresLedger.verify`` finds
nothing; the two ledgers are equal (every transfer: id, kind, created_at relative to the
epoch, reference, FX quote, entries); in run A every lease has exactly one ``lease.ended``
whose totals equal the database, each charge transfer is announced exactly once (a
``lease.charged``, or a place in a ``leases.settled`` of the settlement loop) and vice versa,
and its lease events equal run B's; every credit of every burst is booked once.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency, from_micros
from gpux_contracts.orders import OrderPlaced, TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    BILLING_LEASES,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_COMMANDS,
    Topic,
)
from gpux_devinfra.testing.kafka import publish, published
from gpux_devinfra.testing.payloads import credit_requested, order_placed, trade_executed
from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.settings import GpuxSettings

SEED = 20261130
GPU = "gpu-billing-sigkill"
LEASES = 40
BUYERS = [f"buyer-{i:03d}" for i in range(LEASES)]
KILLS = 3
EXTRA = 1200  # credits in each burst that run A is killed in
SPEED = 90  # an hour in 40 s (a restarted consumer rejoins its group in about 10 s)
SETTLE_EVERY_S = 300  # per-second leases are settled every 5 minutes (3.3 s)
STAGGER_S = 30  # between trades' start times (clock seconds)
TEST_DEADLINE_S = 150.0

TOPUPS_SQL = "SELECT count(*) FROM billing.transfers WHERE kind = 'topup'"
CHARGES_SQL = "SELECT count(*) FROM billing.transfers WHERE kind = 'charge'"
EXTRAS_SQL = "SELECT count(*) FROM billing.transfers WHERE id LIKE 'credit:extra-%'"
INBOX_LOCKED_SQL = """
SELECT count(*) > 0 FROM pg_locks
 WHERE locktype = 'relation' AND relation = 'billing.inbox'::regclass AND granted
   AND mode = 'RowExclusiveLock' AND pid <> pg_backend_pid()
   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""

Run = tuple[str, GpuxSettings, ServiceProcess]


async def _count(conn: asyncpg.Connection, sql: str) -> int:
    try:
        return int(await conn.fetchval(sql))
    except (asyncpg.UndefinedTableError, asyncpg.InvalidSchemaNameError):
        return -1


async def _ledger(conn: asyncpg.Connection, origin: datetime) -> dict[str, tuple[Any, ...]]:
    """Every transfer with its entries; times relative to ``origin``."""
    rows = await conn.fetch(
        "SELECT t.id, t.kind, t.created_at, t.reference, t.fx_base, t.fx_quote, t.fx_rate,"
        "       t.fx_rate_at,"
        "       array_agg(ARRAY[e.leg::text, e.owner, e.currency, e.kind, e.amount_micros::text]"
        "                 ORDER BY e.leg) AS entries"
        "  FROM billing.transfers t JOIN billing.entries e ON e.transfer_id = t.id"
        " GROUP BY t.id"
    )
    return {
        r["id"]: (
            r["kind"],
            r["created_at"] - origin,
            r["reference"],
            r["fx_base"],
            r["fx_quote"],
            r["fx_rate"],
            None if r["fx_rate_at"] is None else r["fx_rate_at"] - origin,
            tuple(tuple(e) for e in r["entries"]),
        )
        for r in rows
    }


@dataclass
class Exchange:
    """The two runs (A killed, B the reference), their database connections and shared clock."""

    runs: list[Run]
    conns: list[asyncpg.Connection]
    epoch: datetime
    begun: float = field(default_factory=time.monotonic)

    @property
    def killed(self) -> ServiceProcess:
        return self.runs[0][2]

    def left(self) -> float:
        return TEST_DEADLINE_S - (time.monotonic() - self.begun)

    def clock(self) -> datetime:
        return self.epoch + (datetime.now(UTC) - self.epoch) * SPEED

    def at(self, payload: Payload, when: datetime, producer: str = "gateway") -> Envelope[Any]:
        return wrap(payload, producer=producer, occurred_at=when)

    async def until(self, what: str, done: Callable[[asyncpg.Connection], Awaitable[bool]]) -> None:
        """Wait until ``done`` holds in both runs; fails with the log of a run that died or
        is not done by the test's deadline."""
        print(f"{time.monotonic() - self.begun:.1f} s: waiting for {what}")

        async def states() -> list[bool]:
            states = [await done(c) for c in self.conns]
            for (name, _, service), ok in zip(self.runs, states, strict=True):
                assert service.alive, f"{name} died:\n{service.tail()}"
                assert ok or self.left() > 0, f"{name}: not done in time: {what}\n{service.tail()}"
            return states

        await eventually(states, all, what=what, timeout_s=self.left() + 5, interval_s=0.1)

    async def publish_all(self, topic: Topic, items: Sequence[tuple[str, Envelope[Any]]]) -> None:
        await asyncio.gather(*(publish(s, topic, items) for _, s, _ in self.runs))


def _runs(settings: Sequence[GpuxSettings], epoch: datetime, tmp_path: Path) -> list[Run]:
    runs: list[Run] = []
    for name, each in zip(("killed", "reference"), settings, strict=True):
        env = service_env(
            each,
            clock_speed=SPEED,
            clock_epoch=epoch,
            settle_every_s=SETTLE_EVERY_S,
            settle_tick_s=0.05,
            settle_batch=6,  # several transactions per tick: more places to be killed in
            log_level="WARNING",
        )
        runs.append((name, each, ServiceProcess("gpux_billing", env, tmp_path / f"{name}.log")))
    return runs


async def _start(ex: Exchange) -> None:
    for _, _, service in ex.runs:
        service.start()
    for _, _, service in ex.runs:
        await service.ready(timeout_s=ex.left() - 60)


def _wallets() -> list[Currency]:
    return [Currency.EUR if i % 4 == 3 else Currency.USD for i in range(LEASES)]


async def _fund(ex: Exchange) -> list[OrderPlaced]:
    """The rate (for the EUR wallets), then credits, then orders: each funded from the credit."""
    epoch = ex.epoch
    rate = RatePublished(
        base=Currency.USD,
        quote=Currency.EUR,
        rate=Decimal("0.9213"),
        as_of=epoch - timedelta(minutes=5),
        source="test",
    )
    wallets = _wallets()
    credits = [
        credit_requested(
            BUYERS[i], 200, wallets[i], credit_id=f"credit-{i:03d}", reference="sigkill test"
        )
        for i in range(LEASES)
    ]
    await asyncio.gather(
        ex.publish_all(FX_RATES, [("USD/EUR", ex.at(rate, epoch, "pricing"))]),
        ex.publish_all(BILLING_COMMANDS, [(c.account_id, ex.at(c, epoch)) for c in credits]),
    )
    await ex.until("credits booked", lambda c: _eq(_count(c, TOPUPS_SQL), LEASES))
    orders = [
        order_placed(
            order_id=f"order-{i:03d}",
            buyer_id=BUYERS[i],
            gpus=1 + i % 4,
            price=2,
            currency=wallets[i],
            gpu=GPU,
            hours=1,
        )
        for i in range(LEASES)
    ]
    await ex.publish_all(ORDERS_COMMANDS, [(GPU, ex.at(o, epoch)) for o in orders])
    await ex.until("orders funded", lambda c: _ok(_count(c, "SELECT count(*) FROM billing.holds")))
    return orders


async def _open_leases(ex: Exchange, orders: Sequence[OrderPlaced]) -> list[TradeExecuted]:
    """One-hour leases starting a little ahead of both clocks, staggered."""
    epoch = ex.epoch
    start = epoch + timedelta(minutes=(ex.clock() - epoch).total_seconds() // 60 + 2)
    trades = [
        trade_executed(
            trade_id=f"lease-{i:03d}",
            order_id=order.order_id,
            offer_id=f"offer-{i % 5}",
            buyer_id=order.buyer_id,
            seller_id=f"seller-{i % 5}",
            gpu=GPU,
            gpus=order.gpus,
            price=Decimal(30 + 7 * i) / 100,
            billing="second" if i % 2 == 0 else "hour",
            hours=1,
            executed_at=start + timedelta(seconds=STAGGER_S * i),
        )
        for i, order in enumerate(orders)
    ]
    await ex.publish_all(MARKET_TRADES, [(GPU, ex.at(t, start, "matching")) for t in trades])
    await ex.until("leases open", lambda c: _ok(_count(c, "SELECT count(*) FROM billing.leases")))
    return trades


async def _stop_some(ex: Exchange, trades: Sequence[TradeExecuted]) -> dict[str, datetime]:
    """Stops for a third of the leases, 20-30 minutes after their start, and far enough ahead
    of the clock that billing handles them before it gets there."""
    ahead = ex.clock() + timedelta(minutes=25)
    stops = {
        t.trade_id: max(t.executed_at + timedelta(minutes=20 + i % 10, seconds=17), ahead)
        for i, t in enumerate(trades)
        if i % 3 == 0
    }
    assert all(
        stops[t.trade_id] < t.executed_at + timedelta(minutes=55)
        for t in trades
        if t.trade_id in stops
    ), "the set-up was too slow: the stops would come after the leases' end"
    requests = [
        LeaseStopRequested(lease_id=lease, buyer_id=f"buyer-{lease[-3:]}", requested_at=when)
        for lease, when in stops.items()
    ]
    await ex.publish_all(BILLING_COMMANDS, [(r.buyer_id, ex.at(r, ex.clock())) for r in requests])
    stopped_sql = "SELECT count(*) FROM billing.leases WHERE end_reason = 'stopped'"
    await ex.until("stops handled", lambda c: _eq(_count(c, stopped_sql), len(stops)))
    assert ex.clock() < min(stops.values()), "a stop was handled after its instant"
    return stops


def _extra_credits(ex: Exchange, kill: int) -> list[tuple[str, Envelope[Any]]]:
    """A burst of small credits for the buyers: billing.commands' batches are large (up to
    ``gpux_platform.batches.MAX_RECORDS``) while billing is killed."""
    wallets = _wallets()
    now = ex.clock()
    burst = []
    for j in range(EXTRA):
        buyer = j % LEASES
        credit = credit_requested(
            BUYERS[buyer],
            "0.01",
            wallets[buyer],
            credit_id=f"extra-{kill}-{j:04d}",
            reference="sigkill burst",
        )
        burst.append((credit.account_id, ex.at(credit, now)))
    return burst


async def _kill_inside_batches(ex: Exchange, rng: random.Random) -> list[tuple[int, int]]:
    """Kill run A ``KILLS`` times while its leases are charged, each time inside a batch of
    consumed records (a unit of work between its inbox claim and its commit); restart it."""
    conn, killed = ex.conns[0], ex.killed
    kills_at: list[tuple[int, int]] = []
    for kill in range(KILLS):
        before = await _count(conn, CHARGES_SQL)
        while await _count(conn, CHARGES_SQL) <= before:  # progress since the restart
            assert killed.alive, killed.tail()
            assert ex.left() > 25, f"no progress after a restart:\n{killed.tail()}"
            await asyncio.sleep(0.05)
        await ex.publish_all(BILLING_COMMANDS, _extra_credits(ex, kill))
        # A seeded point into the burst, then the first moment a batch is in flight.
        threshold = EXTRA * kill + int(EXTRA * rng.uniform(0.05, 0.5))
        while await _count(conn, EXTRAS_SQL) < threshold or not await _in_batch(conn):
            assert killed.alive, killed.tail()
            assert ex.left() > 15, f"run A applies no batch:\n{killed.tail()}"
            await asyncio.sleep(0.002)
        killed.kill()
        kills_at.append((await _count(conn, CHARGES_SQL), await _count(conn, EXTRAS_SQL)))
        print(f"{time.monotonic() - ex.begun:.1f} s: killed inside a batch, {kills_at[-1]}")
        killed.start()
    return kills_at


async def _in_batch(conn: asyncpg.Connection) -> bool:
    """Whether a unit of work of billing's consumers is open: it claimed records in the inbox
    (a row lock on ``billing.inbox`` held until it commits) and has not committed yet."""
    return bool(await conn.fetchval(INBOX_LOCKED_SQL))


async def _ledgers(ex: Exchange) -> tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]:
    """Both ledgers pass the audit; returns them (run A's, run B's)."""
    ledgers = []
    for (name, _, _), conn in zip(ex.runs, ex.conns, strict=True):
        audit = await PostgresLedger(conn).verify()
        assert audit.ok, f"{name}: {audit}"
        ledgers.append(await _ledger(conn, ex.epoch))
    return ledgers[0], ledgers[1]


def _check_lease_events(
    mine: list[tuple[str, dict[str, Any]]],
    got: dict[str, tuple[Any, ...]],
    leases: dict[str, asyncpg.Record],
) -> None:
    """Run A's lease events: none lost, none changed, charges once each, totals as stored."""
    charges_by_lease: dict[str, set[str]] = defaultdict(set)
    for transfer_id, value in got.items():
        if value[0] == "charge":
            charges_by_lease[transfer_id.split(":")[1]].add(transfer_id)
    for lease_id, row in leases.items():
        mine_of_lease = [p for t, p in mine if p["lease_id"] == lease_id]
        by_type = Counter(t for t, p in mine if p["lease_id"] == lease_id)
        assert by_type["lease.opened"] == 1, (lease_id, by_type)
        assert by_type["lease.ended"] == 1, (lease_id, by_type)
        charged = [p["transfer_id"] for p in mine_of_lease if "transfer_id" in p]
        assert len(charged) == len(set(charged)), f"{lease_id}: a charge announced twice"
        assert set(charged) == charges_by_lease[lease_id], lease_id
        (ended,) = [p for t, p in mine if t == "lease.ended" and p["lease_id"] == lease_id]
        totals = ended["totals"]
        assert totals["period"] == row["period"]
        assert datetime.fromisoformat(totals["charged_through"]) == row["charged_through"]
        assert Decimal(totals["total_charged"]) == from_micros(row["charged_micros"]), (
            lease_id,
            totals,
        )
        assert Decimal(totals["total_paid"]) == from_micros(row["paid_micros"])
        assert Decimal(totals["total_fee"]) == from_micros(row["fee_micros"])
        assert Decimal(totals["total_seller"]) == from_micros(row["seller_micros"])


async def _stored_leases(conn: asyncpg.Connection) -> dict[str, asyncpg.Record]:
    rows = await conn.fetch(
        "SELECT id, ended_at, end_reason, period, charged_through, charged_micros,"
        " paid_micros, fee_micros, seller_micros FROM billing.leases"
    )
    return {r["id"]: r for r in rows}


async def _verify(ex: Exchange, stops: dict[str, datetime]) -> str:
    """The two ledgers are equal, transfer by transfer; run A's leases and lease events are
    exactly those of the uninterrupted run. Returns a summary line."""
    got, expected = await _ledgers(ex)
    assert set(got) == set(expected), (
        f"missing: {sorted(set(expected) - set(got))[:5]},"
        f" extra: {sorted(set(got) - set(expected))[:5]}"
    )
    differing = [i for i in expected if got[i] != expected[i]]
    assert not differing, [(i, got[i], expected[i]) for i in differing[:3]]
    kinds = Counter(v[0] for v in got.values())
    assert kinds["charge"] > 4 * LEASES, kinds
    assert kinds["topup"] == LEASES + KILLS * EXTRA, kinds  # every credit booked once
    leases = await _stored_leases(ex.conns[0])
    assert len(leases) == LEASES
    for lease_id, row in leases.items():
        reason = "stopped" if lease_id in stops else "completed"
        assert row["end_reason"] == reason, (lease_id, row["end_reason"])
        if lease_id in stops:
            assert row["ended_at"] == stops[lease_id], lease_id
    mine, theirs = [await _lease_events(s) for _, s, _ in ex.runs]
    assert mine == theirs, "run A's lease events differ from the uninterrupted run's"
    _check_lease_events(mine, got, leases)
    return f"{LEASES} leases, {len(got)} transfers ({dict(kinds)}), {len(mine)} lease events"


async def test_sigkill_while_leases_run_leaves_the_ledger_of_an_uninterrupted_run(
    own_settings: GpuxSettings, second_own_settings: GpuxSettings, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    epoch = datetime.now(UTC).replace(microsecond=0)
    runs = _runs([own_settings, second_own_settings], epoch, tmp_path)  # a rerun: new ones
    conns = [await asyncpg.connect(s.database_url.get_secret_value()) for _, s, _ in runs]
    ex = Exchange(runs, conns, epoch)
    try:
        await _start(ex)
        trades = await _open_leases(ex, await _fund(ex))
        stops = await _stop_some(ex, trades)
        kills_at = await _kill_inside_batches(ex, rng)
        ends = max(t.executed_at for t in trades) + timedelta(hours=1)
        assert ex.clock() < ends, "the leases ended before the last kill: slow the clock down"
        # Let both finish: every lease ended and every outbox row published.
        running_sql = "SELECT count(*) FROM billing.leases WHERE ended_at IS NULL"
        await ex.until("leases ended", lambda c: _eq(_count(c, running_sql), 0))
        outbox_sql = "SELECT count(*) FROM billing.outbox WHERE published_at IS NULL"
        await ex.until("outbox drained", lambda c: _eq(_count(c, outbox_sql), 0))
        summary = await _verify(ex, stops)
        assert ex.killed.starts == KILLS + 1
        print(
            f"\n{summary}, kills inside batches after (charges, burst credits) {kills_at},"
            f" {time.monotonic() - ex.begun:.1f} s"
        )
    finally:
        for conn in conns:
            await conn.close()
        for _, _, service in runs:
            service.stop()


async def _ok(count: Awaitable[int]) -> bool:
    return await count == LEASES


async def _eq(count: Awaitable[int], expected: int) -> bool:
    return await count == expected


def _per_charge(event_type: str, payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A lease event as the runs must agree on it: a ``leases.settled`` as one entry per charge
    it announces (which periods one batch of the loop took together depends on when it ran,
    and the run killed ran late; the charges do not), any other event as it is."""
    if event_type != "leases.settled":
        return [(event_type, payload)]
    return [
        (event_type, {"lease_id": item["lease_id"], "transfer_id": transfer_id})
        for item in payload["leases"]
        for transfer_id in item["transfer_ids"]
    ]


async def _lease_events(settings: GpuxSettings) -> list[tuple[str, dict[str, Any]]]:
    """Distinct lease events (type, payload) in a stable order; copies must be identical. An
    aggregated event counts once per charge it announces (``_per_charge``)."""
    found = await published(settings, BILLING_LEASES, lambda b: True, settle_s=1.0)
    by_id: dict[str, set[str]] = defaultdict(set)
    bodies: dict[str, tuple[str, dict[str, Any]]] = {}
    for record in found:
        body = record.body
        by_id[body["event_id"]].add(repr(sorted(body["payload"].items())))
        bodies[body["event_id"]] = (body["event_type"], body["payload"])
    assert all(len(copies) == 1 for copies in by_id.values()), "an event id with two payloads"
    events = [e for event_type, p in bodies.values() for e in _per_charge(event_type, p)]
    return sorted(events, key=lambda x: (x[1]["lease_id"], x[0], repr(x[1])))
