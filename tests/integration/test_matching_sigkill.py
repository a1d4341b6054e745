"""Matching survives SIGKILL inside its batches: every trade exactly once, as the pure engine says.

``python -m gpux_matching`` runs as a real process (snapshots every 50 commands). Ten offers
go to ``pricing.offers`` and, once the book has logged them, 3,000 funded orders (limit and
market, with and without a cap, 1-6 GPUs) to ``orders.book`` in one burst, all keyed by one
GPU model so that each topic is one ordered partition. The service takes them in batches of
up to 500 records, each one unit of work (one transaction) and one offset commit. It is killed
with SIGKILL three times, each when its log has grown past a seeded count of commands (spread
over the burst) and a seeded 0-40 ms more: just after a unit committed, so that the kill falls
inside the next batch (its transaction is lost) or between a batch's database commit and its
offset commit (the whole batch comes again and must change nothing). It is restarted each time,
then left to finish. The expected trades come from the pure engine fed the same commands in
the same order. ``market.trades`` must hold exactly those trades (a republished outbox row may
appear twice, but only as an exact copy with the same event id), and ``matching.commands``
must hold every input exactly once, in publication order.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple, cast

import asyncpg
from aiokafka import TopicPartition

from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity, OfferAccepted, OfferSubmitted, Tier
from gpux_contracts.orders import (
    OrderFunded,
    OrderPlaced,
    OrderTier,
    OrderType,
    TimeInForce,
)
from gpux_contracts.topics import MARKET_TRADES, ORDERS_BOOK, PRICING_OFFERS
from gpux_devinfra.testing.kafka import committed_offsets, publish_payloads, records_to_end
from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_matching.domain import Command, MatchingEngine, apply, partition_of
from gpux_matching.entrypoints.kafka import BOOK_GROUP
from gpux_matching.service.offers import add_command
from gpux_matching.service.orders import place_command
from gpux_platform.settings import GpuxSettings

SEED = 20261129
GPU = "gpu-sigkill"
OFFERS = 10
ORDERS = 3000
TOTAL = OFFERS + ORDERS
KILLS = 3
TEST_DEADLINE_S = 120.0
QUIET_S = 3.0

# Trade fields that come from the matching itself (executed_at is the service's clock).
Key = tuple[str, str, str, int, Decimal]


class Kill(NamedTuple):
    """Where one kill landed: commands logged, and orders whose offsets were committed."""

    logged: int
    committed: int


def _offers(rng: random.Random) -> list[OfferSubmitted]:
    return [
        OfferSubmitted(
            offer_id=f"off-{i:02d}-{new_id()}",
            seller_id=f"seller-{i % 3}",
            gpu=GPU,
            gpus=rng.randint(30, 80),
            price_per_gpu_hour=Decimal(rng.randint(30, 70)) / 100,
            currency=Currency("EUR"),
            tier=Tier.ON_DEMAND,
            billing=BillingGranularity.HOUR,
        )
        for i in range(OFFERS)
    ]


def _orders(rng: random.Random) -> list[OrderPlaced]:
    placed = []
    for i in range(ORDERS):
        roll = rng.random()
        if roll < 0.6:
            kind, price = OrderType.LIMIT, Decimal(rng.randint(20, 75)) / 100
        elif roll < 0.85:
            kind, price = OrderType.MARKET, Decimal(rng.randint(35, 90)) / 100
        else:
            kind, price = OrderType.MARKET, None
        placed.append(
            OrderPlaced(
                order_id=f"ord-{i:04d}-{new_id()}",
                buyer_id=f"buyer-{i % 7}",
                gpu=GPU,
                gpus=rng.randint(1, 6),
                type=kind,
                max_price_per_gpu_hour=price,
                currency=Currency("EUR"),
                tier=OrderTier.ANY,
                hours=rng.randint(1, 4),
                time_in_force=TimeInForce.GTC,
            )
        )
    return placed


def _commands(offers: list[OfferSubmitted], orders: list[OrderPlaced]) -> list[Command]:
    """The service's commands for these inputs, in publication order."""
    commands: list[Command] = [add_command(o, 1) for o in offers]
    commands += [place_command(o, 2) for o in orders]
    return commands


def _expected(offers: list[OfferSubmitted], orders: list[OrderPlaced]) -> Counter[Key]:
    """The trades of the pure engine fed the service's commands, in the same order."""
    engine = MatchingEngine({"EUR": 1_000_000})
    trades: Counter[Key] = Counter()
    for command in _commands(offers, orders):
        for fill in apply(engine, command).fills:
            price = Decimal(fill.price_micros) / 1_000_000
            trades[(fill.trade_id, fill.order_id, fill.offer_id, fill.gpus, price)] += 1
    return trades


async def _read_trades(settings: GpuxSettings) -> list[tuple[str, dict[str, Any]]]:
    """(event id, payload as JSON) of every record the service put on ``market.trades``."""
    records = await records_to_end(settings, MARKET_TRADES, timeout_s=20)
    bodies = [json.loads(cast(bytes, record.value)) for record in records]
    return [(b["event_id"], b["payload"]) for b in bodies if b.get("producer") == "matching"]


async def _logged(conn: asyncpg.Connection) -> list[tuple[str, dict[str, Any]]]:
    rows = await conn.fetch("SELECT kind, body FROM matching.commands ORDER BY seq")
    return [(row["kind"], json.loads(row["body"])) for row in rows]


async def _count(conn: asyncpg.Connection) -> int:
    """Commands logged so far (0 before the service made its tables)."""
    try:
        return int(await conn.fetchval("SELECT count(*) FROM matching.commands"))
    except asyncpg.UndefinedTableError:
        return 0


async def _unpublished(conn: asyncpg.Connection) -> int:
    try:
        n = await conn.fetchval("SELECT count(*) FROM matching.outbox WHERE published_at IS NULL")
    except asyncpg.UndefinedTableError:
        return -1
    return int(n)


async def _committed(settings: GpuxSettings) -> int:
    """The book group's committed offset of the orders' partition (0: none yet)."""
    offsets = await committed_offsets(settings, BOOK_GROUP)
    partition = partition_of(GPU, ORDERS_BOOK.partitions)
    meta = offsets.get(TopicPartition(settings.topic(ORDERS_BOOK), partition))
    return 0 if meta is None or meta.offset < 0 else int(meta.offset)


async def _kill_inside_batches(
    service: ServiceProcess,
    conn: asyncpg.Connection,
    settings: GpuxSettings,
    rng: random.Random,
    left: Callable[[], float],
) -> list[Kill]:
    """Kill the service KILLS times, each just after a unit committed past a seeded count."""
    span = ORDERS // (KILLS + 1)
    thresholds = [OFFERS + k * span + rng.randint(-span // 3, span // 3) for k in (1, 2, 3)]
    kills: list[Kill] = []
    for threshold in thresholds:
        before = kills[-1].logged if kills else OFFERS
        # Progress since the (re)start, past the threshold: a unit just committed.
        while (logged := await _count(conn)) <= before or logged < threshold:
            assert left() > 30, f"no progress after a restart:\n{service.tail()}"
            await asyncio.sleep(0.005)
        await asyncio.sleep(rng.uniform(0, 0.04))
        service.kill()
        kills.append(Kill(await _count(conn), await _committed(settings)))
        service.start()
    return kills


async def _finish(
    service: ServiceProcess,
    conn: asyncpg.Connection,
    settings: GpuxSettings,
    left: Callable[[], float],
) -> list[tuple[str, dict[str, Any]]]:
    """Every input logged, the outbox drained, and the trades unchanged for QUIET_S: the
    trade records the service published."""
    seen: list[tuple[str, dict[str, Any]]] = []
    quiet_since = time.monotonic()
    while True:
        assert left() > 0, (
            f"not done in time: {await _count(conn)}/{TOTAL} commands logged, "
            f"{await _unpublished(conn)} unpublished, {len(seen)} trade records\n{service.tail()}"
        )
        now_seen = await _read_trades(settings)
        if len(now_seen) != len(seen):
            seen, quiet_since = now_seen, time.monotonic()
        done = await _count(conn) >= TOTAL and await _unpublished(conn) == 0
        if done and time.monotonic() - quiet_since >= QUIET_S:
            return seen
        await asyncio.sleep(0.5)


async def _check_log(
    conn: asyncpg.Connection, offers: list[OfferSubmitted], orders: list[OrderPlaced]
) -> None:
    """The service's own record: every input applied exactly once, in publication order."""
    logged = await _logged(conn)
    assert [k for k, _ in logged].count("add_offer") == OFFERS
    assert [b["offer_id"] for k, b in logged if k == "add_offer"] == [o.offer_id for o in offers]
    placed = [b["order_id"] for k, b in logged if k == "place_order"]
    assert len(placed) == len(set(placed)), "an order was applied twice"
    assert placed == [o.order_id for o in orders]
    assert len(logged) == TOTAL, Counter(k for k, _ in logged)
    inbox = await conn.fetchval("SELECT count(*) FROM matching.inbox")
    assert inbox == TOTAL


def _check_trades(seen: list[tuple[str, dict[str, Any]]], expected: Counter[Key]) -> int:
    """market.trades holds exactly the expected trades, duplicates only as exact copies of one
    outbox row; returns how many distinct trades there are."""
    by_trade: dict[str, set[tuple[str, str]]] = {}
    for event_id, payload in seen:
        copy = (event_id, json.dumps(payload, sort_keys=True))
        by_trade.setdefault(payload["trade_id"], set()).add(copy)
    differing = {t: copies for t, copies in by_trade.items() if len(copies) > 1}
    assert not differing, f"a trade id was published with different contents: {differing}"
    got: Counter[Key] = Counter()
    for copies in by_trade.values():
        ((_, body),) = copies
        p = json.loads(body)
        key = (p["trade_id"], p["order_id"], p["offer_id"], p["gpus"])
        got[(*key, Decimal(p["price_per_gpu_hour"]))] += 1
    assert set(by_trade) == {k[0] for k in expected}
    assert got == expected
    return len(by_trade)


async def test_sigkill_inside_batches_loses_and_duplicates_no_trade(
    own_settings: GpuxSettings, tmp_path: Path
) -> None:
    settings = own_settings  # a database of this try's own: a rerun starts from nothing
    rng = random.Random(SEED)
    offers, orders = _offers(rng), _orders(rng)
    expected = _expected(offers, orders)
    assert expected, "the seeded stream should trade"
    begun = time.monotonic()

    def left() -> float:
        return TEST_DEADLINE_S - (time.monotonic() - begun)

    env = service_env(settings, snapshot_every=50, expiry_interval_s=0.5)
    service = ServiceProcess("gpux_matching", env, tmp_path / "matching.log")
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        service.start()
        accepted = [(GPU, OfferAccepted(offer=o, revision=1)) for o in offers]
        await publish_payloads(settings, PRICING_OFFERS, "pricing", accepted)
        # Offers and orders are separate topics: let the book log every offer first, so that
        # the order of commands (and so the trades) is defined.
        while await _count(conn) < OFFERS:
            assert left() > 60, f"the offers were never logged:\n{service.tail()}"
            assert service.alive, service.tail()
            await asyncio.sleep(0.2)
        held, eur = Decimal("1000"), Currency("EUR")
        funded = [
            OrderFunded(order=o, hold_id=new_id(), held=held, held_currency=eur) for o in orders
        ]
        await publish_payloads(settings, ORDERS_BOOK, "billing", [(GPU, f) for f in funded])

        kills = await _kill_inside_batches(service, conn, settings, rng, left)
        seen = await _finish(service, conn, settings, left)
        await _check_log(conn, offers, orders)
        trades = _check_trades(seen, expected)
        assert service.starts == KILLS + 1
        landed = [(k.logged, k.logged - OFFERS - k.committed) for k in kills]
        print(
            f"\n{trades} trades, {len(seen)} trade records, {len(seen) - trades} exact "
            f"duplicates; kills after (commands logged, orders applied but not yet committed "
            f"to Kafka) {landed}; {time.monotonic() - begun:.1f} s"
        )
    finally:
        await conn.close()
        service.stop()
