"""Billing survives SIGKILL while leases run: the ledger equals that of an uninterrupted run.

Two runs of ``python -m gpux_billing`` get the same input at the same time, each in a fresh
database and namespace, with the same fast clock (``SPEED`` times the wall clock from one
epoch, so an hour passes in 20 s): run A is SIGKILLed ``KILLS`` times at seeded random
moments while its leases run and restarted each time; run B is left alone.

The input: a USD/EUR rate; one credit and one funded order per buyer; then ``LEASES``
one-hour trades (half billed per second, half per started hour, a quarter paid from EUR
wallets at the stored rate, start times staggered); then stop requests for a third of them,
at instants far enough ahead that billing handles each before its clock gets there (a stop
handled late ends at the last settled instant instead, and the ledger would legitimately
differ). Every envelope is built once and published to both runs, and every instant is set by
the test relative to the shared epoch, so both runs must post the very same transfers.

At the end, in both runs every lease has ended and ``PostgresLedger.verify`` finds
nothing; the two ledgers are equal (every transfer: id, kind, created_at relative to the
epoch, reference, FX quote, entries); in run A every lease has exactly one ``lease.ended``
whose totals equal the database, each charge transfer has exactly one ``lease.charged`` and
vice versa, and its lease events equal run B's.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_contracts.billing import CreditRequested
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency, from_micros
from gpux_contracts.orders import (
    OrderPlaced,
    OrderTier,
    OrderType,
    TimeInForce,
    TradeExecuted,
)
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    BILLING_LEASES,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_COMMANDS,
    Topic,
)
from gpux_devinfra.testing.kafka import publish, published
from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_platform.settings import GpuxSettings

SEED = 20261130
GPU = "gpu-billing-sigkill"
LEASES = 40
KILLS = 3
SPEED = 180  # an hour in 20 s
SETTLE_EVERY_S = 300  # per-second leases are settled every 5 minutes (1.7 s)
STAGGER_S = 30  # between trades' start times (clock seconds)
TEST_DEADLINE_S = 85.0

Run = tuple[str, GpuxSettings, ServiceProcess]


async def _count(conn: asyncpg.Connection, sql: str) -> int:
    try:
        return int(await conn.fetchval(sql))
    except (asyncpg.UndefinedTableError, asyncpg.InvalidSchemaNameError):
        return -1


async def _serving(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


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


async def test_sigkill_while_leases_run_leaves_the_ledger_of_an_uninterrupted_run(
    module_settings: GpuxSettings, second_module_settings: GpuxSettings, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    begun = time.monotonic()

    def left() -> float:
        return TEST_DEADLINE_S - (time.monotonic() - begun)

    epoch = datetime.now(UTC).replace(microsecond=0)

    def clock() -> datetime:
        return epoch + (datetime.now(UTC) - epoch) * SPEED

    runs: list[Run] = []
    for name, settings in (("killed", module_settings), ("reference", second_module_settings)):
        env = service_env(
            settings,
            clock_speed=SPEED,
            clock_epoch=epoch,
            settle_every_s=SETTLE_EVERY_S,
            settle_tick_s=0.05,
            settle_batch=6,  # several transactions per tick: more places to be killed in
            log_level="WARNING",
        )
        runs.append((name, settings, ServiceProcess("gpux_billing", env, tmp_path / f"{name}.log")))
    conns = [await asyncpg.connect(s.database_url.get_secret_value()) for _, s, _ in runs]
    killed = runs[0][2]

    async def until(what: str, done: Callable[[asyncpg.Connection], Awaitable[bool]]) -> None:
        print(f"{time.monotonic() - begun:.1f} s: waiting for {what}")
        while True:
            states = [await done(c) for c in conns]
            if all(states):
                return
            for (name, _, service), ok in zip(runs, states, strict=True):
                assert service.alive, f"{name} died:\n{service.tail()}"
                assert ok or left() > 0, f"{name}: not done in time: {what}\n{service.tail()}"
            await asyncio.sleep(0.1)

    async def publish_all(topic: Topic, items: Sequence[tuple[str, Envelope[Any]]]) -> None:
        await asyncio.gather(*(publish(s, topic, items) for _, s, _ in runs))

    def at(payload: Payload, when: datetime, producer: str = "gateway") -> Envelope[Any]:
        return wrap(payload, producer=producer, occurred_at=when)

    try:
        for _, _, service in runs:
            service.start()
        for _, _, service in runs:
            port = int(service.env["GPUX_HTTP_PORT"])
            while not await _serving(port):
                assert service.alive, service.tail()
                assert left() > 60, f"billing did not start:\n{service.tail()}"
                await asyncio.sleep(0.1)

        # The rate (for the EUR wallets), then credits, then orders: each funded from the credit.
        rate = RatePublished(
            base=Currency.USD,
            quote=Currency.EUR,
            rate=Decimal("0.9213"),
            as_of=epoch - timedelta(minutes=5),
            source="test",
        )
        wallets = [Currency.EUR if i % 4 == 3 else Currency.USD for i in range(LEASES)]
        buyers = [f"buyer-{i:03d}" for i in range(LEASES)]
        credits = [
            CreditRequested(
                credit_id=f"credit-{i:03d}",
                account_id=buyers[i],
                amount=Decimal(200),
                currency=wallets[i],
                reference="sigkill test",
                requested_by="admin",
            )
            for i in range(LEASES)
        ]
        await asyncio.gather(
            publish_all(FX_RATES, [("USD/EUR", at(rate, epoch, "pricing"))]),
            publish_all(BILLING_COMMANDS, [(c.account_id, at(c, epoch)) for c in credits]),
        )
        await until(
            "credits booked",
            lambda c: _ok(_count(c, "SELECT count(*) FROM billing.transfers WHERE kind = 'topup'")),
        )
        gpus = [1 + i % 4 for i in range(LEASES)]
        orders = [
            OrderPlaced(
                order_id=f"order-{i:03d}",
                buyer_id=buyers[i],
                gpu=GPU,
                gpus=gpus[i],
                type=OrderType.LIMIT,
                max_price_per_gpu_hour=Decimal(2),
                currency=wallets[i],
                tier=OrderTier.ANY,
                hours=1,
                time_in_force=TimeInForce.GTC,
            )
            for i in range(LEASES)
        ]
        await publish_all(ORDERS_COMMANDS, [(GPU, at(o, epoch)) for o in orders])
        await until("orders funded", lambda c: _ok(_count(c, "SELECT count(*) FROM billing.holds")))

        # Trades: one-hour leases starting a little ahead of both clocks, staggered.
        start = epoch + timedelta(minutes=(clock() - epoch).total_seconds() // 60 + 2)
        trades = [
            TradeExecuted(
                trade_id=f"lease-{i:03d}",
                order_id=orders[i].order_id,
                offer_id=f"offer-{i % 5}",
                buyer_id=buyers[i],
                seller_id=f"seller-{i % 5}",
                gpu=GPU,
                tier="on_demand",
                gpus=gpus[i],
                price_per_gpu_hour=Decimal(30 + 7 * i) / 100,
                currency=Currency.USD,
                billing="second" if i % 2 == 0 else "hour",
                hours=1,
                executed_at=start + timedelta(seconds=STAGGER_S * i),
            )
            for i in range(LEASES)
        ]
        await publish_all(MARKET_TRADES, [(GPU, at(t, start, "matching")) for t in trades])
        await until("leases open", lambda c: _ok(_count(c, "SELECT count(*) FROM billing.leases")))

        # Stops for a third of the leases, 20-30 minutes after their start, and far enough
        # ahead of the clock that billing handles them before it gets there.
        ahead = clock() + timedelta(minutes=25)
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
        await publish_all(BILLING_COMMANDS, [(r.buyer_id, at(r, clock())) for r in requests])
        stopped_sql = "SELECT count(*) FROM billing.leases WHERE end_reason = 'stopped'"
        await until("stops handled", lambda c: _eq(_count(c, stopped_sql), len(stops)))
        assert clock() < min(stops.values()), "a stop was handled after its instant"

        # Kill run A at random moments while its leases are charged; restart it each time.
        charges_sql = "SELECT count(*) FROM billing.transfers WHERE kind = 'charge'"
        kills_at: list[int] = []
        for _ in range(KILLS):
            before = await _count(conns[0], charges_sql)
            while await _count(conns[0], charges_sql) <= before:  # progress since the restart
                assert killed.alive, killed.tail()
                assert left() > 25, f"no progress after a restart:\n{killed.tail()}"
                await asyncio.sleep(0.05)
            await asyncio.sleep(rng.uniform(0.1, 1.5))
            kills_at.append(await _count(conns[0], charges_sql))
            killed.kill()
            killed.start()
        ends = max(t.executed_at for t in trades) + timedelta(hours=1)
        assert clock() < ends, "the leases ended before the last kill: slow the clock down"

        # Let both finish: every lease ended and every outbox row published.
        running_sql = "SELECT count(*) FROM billing.leases WHERE ended_at IS NULL"
        await until("leases ended", lambda c: _eq(_count(c, running_sql), 0))
        outbox_sql = "SELECT count(*) FROM billing.outbox WHERE published_at IS NULL"
        await until("outbox drained", lambda c: _eq(_count(c, outbox_sql), 0))

        # Both ledgers pass the audit and are equal, transfer by transfer.
        ledgers = []
        for (name, _, _), conn in zip(runs, conns, strict=True):
            audit = await PostgresLedger(conn).verify()
            assert audit.ok, f"{name}: {audit}"
            ledgers.append(await _ledger(conn, epoch))
        got, expected = ledgers
        assert set(got) == set(expected), (
            f"missing: {sorted(set(expected) - set(got))[:5]},"
            f" extra: {sorted(set(got) - set(expected))[:5]}"
        )
        differing = [i for i in expected if got[i] != expected[i]]
        assert not differing, [(i, got[i], expected[i]) for i in differing[:3]]
        kinds = Counter(v[0] for v in got.values())
        assert kinds["charge"] > 4 * LEASES, kinds

        leases = {
            r["id"]: r
            for r in await conns[0].fetch(
                "SELECT id, ended_at, end_reason, period, charged_through, charged_micros,"
                " paid_micros, fee_micros, seller_micros FROM billing.leases"
            )
        }
        assert len(leases) == LEASES
        for lease_id, row in leases.items():
            reason = "stopped" if lease_id in stops else "completed"
            assert row["end_reason"] == reason, (lease_id, row["end_reason"])
            if lease_id in stops:
                assert row["ended_at"] == stops[lease_id], lease_id

        # Lease events of run A: none lost, none changed, charges once each.
        events = [await _lease_events(s) for _, s, _ in runs]
        mine, theirs = events
        assert mine == theirs, "run A's lease events differ from the uninterrupted run's"
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
        assert killed.starts == KILLS + 1
        print(
            f"\n{LEASES} leases, {len(got)} transfers ({dict(kinds)}), {len(mine)} lease events,"
            f" kills after {kills_at} charges, {time.monotonic() - begun:.1f} s"
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


async def _lease_events(settings: GpuxSettings) -> list[tuple[str, dict[str, Any]]]:
    """Distinct lease events (type, payload) in a stable order; copies must be identical."""
    found = await published(settings, BILLING_LEASES, lambda b: True, settle_s=1.0)
    by_id: dict[str, set[str]] = defaultdict(set)
    bodies: dict[str, tuple[str, dict[str, Any]]] = {}
    for record in found:
        body = record.body
        by_id[body["event_id"]].add(repr(sorted(body["payload"].items())))
        bodies[body["event_id"]] = (body["event_type"], body["payload"])
    assert all(len(copies) == 1 for copies in by_id.values()), "an event id with two payloads"
    return sorted(bodies.values(), key=lambda x: (x[1]["lease_id"], x[0], repr(x[1])))
