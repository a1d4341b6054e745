"""The two runs of a consumer benchmark (``bench/billing_orders.py``, ``billing_trades.py``,
``pricing_trades.py``): the same events applied as one batch and, the peer, one event per unit of
work (a consumer taking one record at a time), each on a fresh database and counted around one
connection; their command line and the table that compares them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import asyncpg
from billing import LOCAL_DB, Counting, OneConnection

from gpux_contracts.events import Envelope
from gpux_contracts.ids import new_id
from gpux_platform.batches import BatchHandler


@dataclass
class Run:
    """One way of applying a bench's events (billing's orders or trades, pricing's trades):
    ``orders`` counts the events applied, whichever they are."""

    orders: int
    units: int
    seconds: float
    round_trips: int
    statements: int
    outcome: dict[str, Any]


def arguments(doc: str, **counts: int) -> argparse.Namespace:
    """The command line of the benchmark ``doc`` describes: ``--NAME N`` for each of ``counts``
    (its default) and ``--db URL``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    for name, default in counts.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--db", default=os.environ.get("GPUX_DATABASE_URL", LOCAL_DB))
    return parser.parse_args()


def scratch_name(label: str) -> str:
    """A new scratch database's name for a run of ``label``."""
    return f"gpux_bench_{label}_{new_id()[-8:].lower()}"


async def both_ways(
    events: Sequence[Envelope[Any]], measure: Callable[[int], Awaitable[Run]]
) -> tuple[Run, Run]:
    """``measure`` (of batches of so many events) with every event in one batch, then with one
    event per batch."""
    return await measure(len(events)), await measure(1)


async def counted_run(
    raw: asyncpg.Connection,
    handler: Callable[[asyncpg.Pool], BatchHandler[Any]],
    events: Sequence[Envelope[Any]],
    per: int,
    outcome: Callable[[], Awaitable[dict[str, Any]]],
) -> Run:
    """Apply ``events`` in batches of ``per`` through ``handler`` on ``raw`` (counted), timed;
    what the database holds after them (``outcome``)."""
    counting = Counting(raw)
    batch = handler(cast(asyncpg.Pool, OneConnection(counting)))
    units = 0
    started = time.perf_counter()
    for at in range(0, len(events), per):
        units += (await batch.apply(events[at : at + per])).units
    seconds = time.perf_counter() - started
    result = await outcome()
    return Run(len(events), units, seconds, counting.round_trips, counting.statements, result)


async def rows_by_name(
    conn: asyncpg.Connection, **queries: str
) -> dict[str, list[tuple[Any, ...]]]:
    """Each of ``queries``' rows, as tuples, under its name: what a run left in the database."""
    return {name: [tuple(r) for r in await conn.fetch(sql)] for name, sql in queries.items()}


def row(label: str, run: Run) -> str:
    """A table row of a run: units, seconds, ms and round trips per item, per unit."""
    per_unit = f"{run.round_trips / run.units:,.1f} / {run.statements / run.units:,.1f}"
    per_item = f"{run.round_trips / run.orders:,.2f}"
    ms = 1000 * run.seconds / run.orders
    return (
        f"| {label:<26} | {run.units:>5} | {run.seconds:>7.3f} | {ms:>8.3f} |"
        f" {per_unit:>15} | {per_item:>9} |"
    )


def report(item: str, batched: Run, single: Run, checked: str) -> None:
    """Print the two runs of ``item``s as a table; fail if they ended differently."""
    same = batched.outcome == single.outcome
    print(f"{batched.orders:,} {item}s of {checked} both ways: {same}", file=sys.stderr)
    print(
        f"| path | units | seconds | ms/{item} | round trips / statements per unit"
        f" | round trips/{item} |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    print(row("one batch", batched))
    print(row(f"one {item} per unit (peer)", single))
    print(f"| **ratio** | | | **{single.seconds / batched.seconds:.1f}×** | | |")
    if not same:
        raise SystemExit("the two paths disagree")
