"""Matching recovery benchmark: how long a restart takes to rebuild a big book.

    uv run python bench/matching_recovery.py [--orders N] [--offers M] [--replay K] [--seed S]
                                             [--db [URL]]

Builds an engine through the pure domain with N resting orders (default 100,000) and M
resting offers (default 1,000) that do not cross, then measures with ``time.perf_counter``
what the service does to write a snapshot (``engine.capture()`` under the book's lock, the
only pause consumers see, then JSON in slices off the lock: ``adapters.snapshots``) and on
start-up (``Book._rebuild``): parse → restore, and the replay of K logged commands after the
snapshot (default 1,000: orders, some of which trade, offers, cancels), decoded from their
logged JSON as ``store.commands_after`` does. It also times the old way, ``engine.snapshot()``
+ ``json.dumps`` in one go, for comparison. With ``--db`` it also writes the snapshot as jsonb
to a scratch table in PostgreSQL (``GPUX_DATABASE_URL``, or the local default of
``uv run gpux infra up``) the way the background writer does, measuring the longest pause of
the event loop meanwhile, then times load (asyncpg fetch of the row) + parse + restore end
to end; the scratch table is dropped afterwards. Prints a table of the figures against the
issue's target: a restart's rebuild under 10 s. Not a timed test: it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
from rich.console import Console
from rich.table import Table

from gpux_matching.domain import (
    AddOffer,
    CancelOrder,
    Command,
    MatchingEngine,
    PlaceOrder,
    apply,
    decode_command,
    encode_command,
    json_parts,
    partition_of,
)
from gpux_matching.domain.snapshot import CHUNK
from gpux_matching.service.partition import capture as capture_paused

TARGET_S = 10.0
PARTITIONS = 6
"""Partitions of pricing.offers / orders.book: each instance rebuilds only its share."""
GPUS: tuple[str, ...] = ("h100", "a100", "l40s", "rtx4090")
DEFAULT_DB = "postgresql://gpux:gpux@127.0.0.1:25432/gpux"
TABLE = "bench_matching_recovery"
NOW = 1_800_000_000_000_000


def gpu_models(count: int) -> tuple[str, ...]:
    """``count`` GPU models for the book to spread over: the four real ones, then made-up ones."""
    return (*GPUS, *(f"gpu-{i}" for i in range(len(GPUS), count)))[: max(count, 1)]


def _bid(
    i: int, rng: random.Random, *, name: str, gpu: str, prices: tuple[int, int], now: int
) -> PlaceOrder:
    """Buyer ``i``'s limit order for a random size and hours, priced within ``prices``."""
    low, high = prices
    return PlaceOrder(
        now=now,
        order_id=name,
        buyer_id=f"buyer-{i % 1009}",
        gpu=gpu,
        gpus=rng.randint(1, 16),
        currency="EUR",
        order_type="limit",
        price_micros=rng.randrange(low, high, 100),
        hours=rng.randint(1, 24),
    )


def _ask(
    i: int, rng: random.Random, *, name: str, gpu: str, prices: tuple[int, int], now: int
) -> AddOffer:
    """Seller ``i``'s on-demand offer of a random size, priced within ``prices``."""
    low, high = prices
    return AddOffer(
        now=now,
        offer_id=name,
        seller_id=f"seller-{i % 97}",
        gpu=gpu,
        tier="on_demand",
        price_micros=rng.randrange(low, high, 100),
        currency="EUR",
        gpus=rng.randint(1, 64),
    )


BIDS = (100_000, 500_000)
"""Resting bids are priced 0.10-0.49; asks 0.50-0.99: nothing crosses."""
ASKS = (500_000, 1_000_000)


def build(
    orders: int, offers: int, rng: random.Random, gpus: tuple[str, ...]
) -> tuple[MatchingEngine, list[str]]:
    """A book with resting bids priced 0.10-0.49 and asks 0.50-0.99 (nothing crosses)."""
    engine = MatchingEngine({"EUR": 1_000_000})
    for i in range(offers):
        gpu = gpus[i % len(gpus)]
        apply(engine, _ask(i, rng, name=f"offer-{i}", gpu=gpu, prices=ASKS, now=NOW))
    order_ids = []
    for i in range(orders):
        order_id = f"order-{i}"
        bid = _bid(i, rng, name=order_id, gpu=gpus[i % len(gpus)], prices=BIDS, now=NOW)
        assert not apply(engine, bid).fills, "the seeded book should not cross"
        order_ids.append(order_id)
    return engine, order_ids


def logged_commands(
    count: int, order_ids: list[str], rng: random.Random, gpus: tuple[str, ...]
) -> list[tuple[str, str]]:
    """``count`` commands as the service logs them (kind, JSON): new bids (a tenth of them
    crossing), new offers (a tenth crossing) and cancels of resting orders."""
    log: list[tuple[str, str]] = []
    for i in range(count):
        roll = rng.random()
        gpu = gpus[i % len(gpus)]
        command: Command
        if roll < 0.5:
            prices = (550_000, 1_000_000) if rng.random() < 0.1 else BIDS
            command = _bid(i, rng, name=f"replay-order-{i}", gpu=gpu, prices=prices, now=NOW + i)
        elif roll < 0.8:
            prices = (300_000, 500_000) if rng.random() < 0.1 else ASKS
            command = _ask(i, rng, name=f"replay-offer-{i}", gpu=gpu, prices=prices, now=NOW + i)
        else:
            command = CancelOrder(now=NOW + i, order_id=rng.choice(order_ids))
        log.append(encode_command(command))
    return log


DbRound = tuple[float, float, float, float, int]
"""(write s, longest loop pause s, fetch s, parse+restore s, stored bytes) of a round trip."""


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def sliced(capture: Any) -> tuple[float, float, str]:
    """(total s, longest slice s, JSON) of the background encoder's slices."""
    parts: list[str] = []
    longest = 0.0
    start = time.perf_counter()
    pieces = json_parts(capture, CHUNK)
    while True:
        t0 = time.perf_counter()
        part = next(pieces, None)
        longest = max(longest, time.perf_counter() - t0)
        if part is None:
            break
        parts.append(part)
    return time.perf_counter() - start, longest, "".join(parts)


async def write_watching_the_loop(conn: Any, body: str) -> tuple[float, float]:
    """(write s, longest event-loop pause s) of an insert as the background writer does it,
    with a ticker measuring how late the loop wakes it meanwhile (what consumers would see)."""
    loop = asyncio.get_running_loop()
    longest = 0.0
    done = False

    async def ticker() -> None:
        nonlocal longest
        while not done:
            before = loop.time()
            await asyncio.sleep(0.001)
            longest = max(longest, loop.time() - before - 0.001)

    watcher = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await conn.execute(f"INSERT INTO {TABLE} (seq, body) VALUES (1, $1::jsonb)", body)
    write_s = time.perf_counter() - start
    done = True
    await watcher
    return write_s, longest


async def database_round(url: str, body: str) -> DbRound:
    """(write s, longest loop pause s, fetch s, parse+restore s, stored bytes) through a
    scratch jsonb table."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        await conn.execute(f"CREATE TABLE {TABLE} (seq bigint PRIMARY KEY, body jsonb NOT NULL)")
        write_s, pause_s = await write_watching_the_loop(conn, body)
        start = time.perf_counter()
        row = await conn.fetchrow(f"SELECT seq, body FROM {TABLE} ORDER BY seq DESC LIMIT 1")
        fetch_s = time.perf_counter() - start
        assert row is not None
        start = time.perf_counter()
        MatchingEngine.restore(json.loads(row["body"]))
        restore_s = time.perf_counter() - start
        size = await conn.fetchval(f"SELECT pg_column_size(body) FROM {TABLE} WHERE seq = 1")
        return write_s, pause_s, fetch_s, restore_s, int(size)
    finally:
        await conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        await conn.close()


def largest_partition(plain: dict[str, Any]) -> tuple[int, str]:
    """(resting orders, snapshot JSON) of the partition holding the most orders: what one
    instance rebuilds when Kafka assigns it that partition."""
    shares = []
    for p in range(PARTITIONS):
        body = {
            **plain,
            "offers": [o for o in plain["offers"] if partition_of(o["gpu"], PARTITIONS) == p],
            "orders": [b for b in plain["orders"] if partition_of(b["gpu"], PARTITIONS) == p],
        }
        shares.append((len(body["orders"]), body))
    count, body = max(shares, key=lambda s: s[0])
    return count, json.dumps(body)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=100_000)
    parser.add_argument("--offers", type=int, default=1_000)
    parser.add_argument("--replay", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--gpus", type=int, default=4, help="GPU models the book spreads over (default 4)"
    )
    parser.add_argument(
        "--db",
        nargs="?",
        const="",
        default=None,
        help="also round-trip the snapshot through PostgreSQL (URL, else GPUX_DATABASE_URL "
        "or the local default)",
    )
    args = parser.parse_args()
    if not (1 <= args.orders <= 2_000_000 and 0 <= args.offers <= 100_000):
        parser.error("--orders must be 1..2,000,000 and --offers 0..100,000")
    return args


@dataclass(frozen=True)
class Rebuild:
    """What one book's snapshot and rebuild took: each step's seconds, in order, and the
    snapshot the service would write (``body``) with its plain form."""

    steps: list[tuple[str, float]]
    rebuild_s: float
    replay_s: float
    fills: int
    plain: dict[str, Any]
    body: str


def measure(engine: MatchingEngine, log: list[tuple[str, str]]) -> Rebuild:
    """Time the old and the new snapshot of ``engine``, then its rebuild: parse, restore and
    the replay of ``log``; checks the rebuilt engine matches the original."""
    snapshot_s, plain = timed(engine.snapshot)
    dumps_s, _ = timed(lambda: json.dumps(plain))
    capture_s, capture = timed(lambda: capture_paused(engine))
    encode_s, slice_s, body = sliced(capture)
    loads_s, parsed = timed(lambda: json.loads(body))
    restore_s, restored = timed(lambda: MatchingEngine.restore(parsed))

    def replay() -> int:
        return sum(len(apply(restored, decode_command(kind, text)).fills) for kind, text in log)

    replay_s, fills = timed(replay)
    # The restored engine must behave like the original: same commands, same fills.
    original_fills = sum(len(apply(engine, decode_command(k, t)).fills) for k, t in log)
    assert fills == original_fills, (fills, original_fills)
    assert restored.snapshot() == engine.snapshot(), "restore + replay diverged"
    steps = [
        ("old: engine.snapshot() → plain data (under the lock)", snapshot_s),
        ("old: json.dumps (under the lock)", dumps_s),
        ("capture (under the lock, GC paused: the consumers' only pause)", capture_s),
        (f"background: JSON in slices of {CHUNK:,} entries (total)", encode_s),
        ("background: longest slice (longest event-loop pause)", slice_s),
        ("json.loads (what the service reads)", loads_s),
        ("MatchingEngine.restore", restore_s),
        (f"replay {len(log):,} logged commands (decode + apply)", replay_s),
    ]
    return Rebuild(steps, loads_s + restore_s + replay_s, replay_s, fills, plain, body)


def add_database_rows(table: Table, db: DbRound, replay_s: float) -> float:
    """The PostgreSQL round trip's rows; returns the rebuild from PostgreSQL, in seconds."""
    write_s, pause_s, fetch_s, db_restore_s, size = db
    table.add_row(
        f"PostgreSQL: write jsonb ({size / 1e6:.1f} MB stored; background)", f"{write_s:.3f}"
    )
    table.add_row("  longest event-loop pause during that write", f"{pause_s:.3f}")
    table.add_row("PostgreSQL: fetch latest snapshot row", f"{fetch_s:.3f}")
    table.add_row("PostgreSQL: json.loads + restore of the fetched row", f"{db_restore_s:.3f}")
    end_to_end = fetch_s + db_restore_s + replay_s
    table.add_row(
        "[b]rebuild from PostgreSQL (fetch + restore + replay)[/b]", f"[b]{end_to_end:.3f}[/b]"
    )
    return end_to_end


def main() -> None:
    args = _arguments()
    rng = random.Random(args.seed)
    gpus = gpu_models(args.gpus)
    print(f"building a book of {args.orders:,} orders and {args.offers:,} offers…", file=sys.stderr)
    build_s, (engine, order_ids) = timed(lambda: build(args.orders, args.offers, rng, gpus))
    run = measure(engine, logged_commands(args.replay, order_ids, rng, gpus))
    share, share_body = largest_partition(run.plain)
    share_loads_s, share_parsed = timed(lambda: json.loads(share_body))
    share_restore_s, _ = timed(lambda: MatchingEngine.restore(share_parsed))
    db: DbRound | None = None
    share_db: DbRound | None = None
    if args.db is not None:
        url = args.db or os.environ.get("GPUX_DATABASE_URL") or DEFAULT_DB
        db = asyncio.run(database_round(url, run.body))
        share_db = asyncio.run(database_round(url, share_body))

    table = Table(
        title=f"matching recovery: {args.orders:,} resting orders, {args.offers:,} offers, "
        f"snapshot {len(run.body) / 1e6:.1f} MB JSON"
    )
    table.add_column("step")
    table.add_column("seconds", justify="right")
    for name, seconds in run.steps:
        table.add_row(name, f"{seconds:.3f}")
    rebuild_s = run.rebuild_s
    table.add_row("[b]rebuild in memory (loads + restore + replay)[/b]", f"[b]{rebuild_s:.3f}[/b]")
    if db is not None:
        rebuild_s = add_database_rows(table, db, run.replay_s)
    part_rebuild_s = share_loads_s + share_restore_s + run.replay_s
    table.add_row(
        f"[b]one partition (largest of {PARTITIONS}: {share:,} orders): loads + restore +"
        " replay of the whole log[/b]",
        f"[b]{part_rebuild_s:.3f}[/b]",
    )
    if share_db is not None:
        _, _, fetch_s, db_restore_s, _ = share_db
        table.add_row(
            "[b]one partition from PostgreSQL (fetch + restore + replay)[/b]",
            f"[b]{fetch_s + db_restore_s + run.replay_s:.3f}[/b]",
        )
    console = Console()
    console.print(table)
    console.print(
        f"built in {build_s:.1f} s; replay made {run.fills} fills; "
        f"target < {TARGET_S:.0f} s: {'met' if rebuild_s < TARGET_S else 'MISSED'} "
        f"({rebuild_s:.2f} s, {rebuild_s / TARGET_S:.0%} of the budget)"
    )


if __name__ == "__main__":
    main()
