"""The whole exchange under load survives SIGKILLs of every service and outages of every store.

Every service runs as its own process, as ``make up`` starts it (catalog, pricing, matching,
billing, the gateway's views and its API), on a PostgreSQL, a Redis and a Kafka broker of this
test's own (never the shared ones, which other sessions use). Buyers and sellers drive it only
through the public REST API: orders at ``ORDER_RATE``/s and offer changes at ``OFFER_RATE``/s.
Meanwhile each of the six processes is SIGKILLed and started again, and each store is stopped
and started, once each, in a seeded random order after seeded random pauses (the seed is
printed; ``GPUX_CHAOS_SEED`` replays it). A restarted process is waited for until ready before
the next fault; a stopped store is started again after a seeded while.

Then the load stops, and within ``SETTLE_S`` (nothing done by hand: no restart, no replay)
every invariant must hold: every accepted order is listed and final and its owners gave it
exactly one final state; no trade is lost or doubled (each order's and each offer's GPUs add up
to its trades', every trade is exactly one lease); the ledger balances per currency and every
balance equals its entries; the best ask equals the book's cheapest free offer; every order and
offer view equals its owners' last state; every process is still the one the test started (none
died by itself) and ready. The report (seed, every fault, every invariant with its result) is
printed and written to ``.gpux/chaos/report.json`` beside the processes' logs.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pytest
from pydantic import SecretStr

from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.chaos import ChaosReport, Target, chaos_seed, inject, plan
from gpux_devinfra.testing.exchange import ExchangeProcesses, exchange_processes
from gpux_devinfra.testing.processes import ServiceProcess
from gpux_devinfra.testing.stores import PrivateStore
from gpux_platform.settings import Environment, GpuxSettings

from .invariants import (
    check_best_asks,
    check_leases,
    check_ledger,
    check_offer_views,
    check_order_views,
    check_orders,
    check_trades,
    check_wallets,
    read_owners,
    read_views,
)
from .load import Client, Load, Market, open_market

pytestmark = pytest.mark.chaos

NAMESPACE = "chaos."
ORDER_RATE = 15.0
OFFER_RATE = 4.0
BUYERS = 4
SELLERS = 2
WARM_S = 3.0
"""Load before the first fault."""
TAIL_S = 3.0
"""Load after the last fault."""
PAUSE_S = (1.0, 4.0)
DOWN_S = (0.5, 3.0)
SETTLE_S = 90.0
"""How long the known failure (below) is waited for to mend before the run ends with it."""
RAISED_LIMIT = "100000000/minute"
SETTINGS = {
    "GPUX_RATE_LIMIT": RAISED_LIMIT,
    "GPUX_ANONYMOUS_RATE_LIMIT": RAISED_LIMIT,
}
OUT = Path(os.environ.get("GPUX_HOME", ".gpux")) / "chaos"


@dataclass
class Run:
    """The exchange under test, where it keeps its data, and the report."""

    exchange: ExchangeProcesses
    stores: dict[str, PrivateStore]
    settings: GpuxSettings
    report: ChaosReport


@pytest.fixture
async def run(
    private_postgres: PrivateStore, private_redis: PrivateStore, private_kafka: PrivateStore
) -> AsyncIterator[Run]:
    report = ChaosReport(chaos_seed())
    print(f"\nchaos seed {report.seed} (replay: GPUX_CHAOS_SEED={report.seed})")
    endpoints = Endpoints(private_kafka.url, private_postgres.url, private_redis.url)
    settings = GpuxSettings(
        env=Environment.TEST,
        kafka_bootstrap=endpoints.kafka_bootstrap,
        database_url=SecretStr(endpoints.database_url),
        redis_url=endpoints.redis_url,
        namespace=NAMESPACE,
    )
    stores = {s.name: s for s in (private_postgres, private_redis, private_kafka)}
    try:
        with exchange_processes(endpoints, NAMESPACE, OUT / "logs", SETTINGS) as exchange:
            exchange.start()
            await exchange.ready()
            yield Run(exchange, stores, settings, report)
    finally:
        print(report.render())
        report.write(OUT / "report.json")


def _process(name: str, process: ServiceProcess) -> Target:
    async def down() -> None:
        await asyncio.to_thread(process.kill)

    async def up() -> None:
        process.start()
        await process.ready(timeout_s=60)

    return Target(name, "SIGKILL", down, up)


def _store(store: PrivateStore) -> Target:
    return Target(store.name, "stop", store.stop, store.start)


def targets(run: Run) -> dict[str, Target]:
    """Every process and every store, by name."""
    found = {name: _process(name, p) for name, p in run.exchange.processes.items()}
    found.update({name: _store(store) for name, store in run.stores.items()})
    return found


async def check_processes(report: ChaosReport, run: Run) -> None:
    """No manual step: every process is the run the test started (none died by itself and
    none was restarted but by a fault), and each answers /readyz."""
    killed = {f.target for f in report.faults if f.kind == "SIGKILL"}
    wrong = {
        name: f"alive {p.alive}, runs {p.starts}"
        for name, p in run.exchange.processes.items()
        if not p.alive or p.starts != 1 + (name in killed)
    }
    detail = str(wrong) if wrong else f"{len(killed)} killed, each started once again"
    report.check("processes: none died by itself or was restarted by hand", not wrong, detail)
    unready = []
    async with httpx.AsyncClient(timeout=5) as client:
        for name, process in run.exchange.processes.items():
            try:
                status = (await client.get(f"{process.url}/readyz")).status_code
            except httpx.HTTPError as exc:
                status = -1
                unready.append(f"{name}: {exc!r}")
            if status != 200:
                unready.append(f"{name}: {status}")
    report.check("processes: every one is ready", not unready, str(unready))


async def check_all(run: Run, market: Market) -> bool:
    """Every invariant once, each recorded in the report; whether all held."""
    report = run.report
    owners = await read_owners(run.settings)
    views = await read_views(market)
    check_orders(report, market, owners, views)
    check_order_views(report, market, owners, views)
    check_trades(report, owners, views)
    check_best_asks(report, views)
    check_offer_views(report, market, owners, views)
    conn = await asyncpg.connect(run.settings.database_url.get_secret_value())
    try:
        await check_leases(report, owners, conn)
        await check_ledger(report, conn)
        await check_wallets(report, views, conn)
    finally:
        await conn.close()
    await check_processes(report, run)
    return report.ok


async def settled(run: Run, market: Market) -> bool:
    """Check every invariant until all hold or ``SETTLE_S`` has passed; the time it took."""
    began = time.monotonic()
    while not await check_all(run, market):
        waited = time.monotonic() - began
        if waited > SETTLE_S:
            run.report.notes["settled"] = f"not within {SETTLE_S:.0f} s"
            return False
        await asyncio.sleep(2)
    run.report.notes["settled"] = f"within {time.monotonic() - began:.1f} s of the load's end"
    return True


async def test_every_fault_leaves_every_invariant_intact(run: Run) -> None:
    report = run.report
    rng = random.Random(report.seed)
    client = Client(run.exchange.url)
    try:
        market = await open_market(client, BUYERS, SELLERS, random.Random(rng.random()))
        report.notes["market open at"] = f"{report.elapsed()} s"
        steps = plan(rng, sorted(targets(run)), pause_s=PAUSE_S, down_s=DOWN_S)
        stop = asyncio.Event()
        load = Load(market, random.Random(rng.random()), ORDER_RATE, OFFER_RATE)
        loading = asyncio.create_task(load.run(stop))
        await asyncio.sleep(WARM_S)
        await inject(steps, targets(run), report)
        await asyncio.sleep(TAIL_S)
        stop.set()
        await loading
        report.notes["load ended at"] = f"{report.elapsed()} s"
        report.notes["cancels sent again after the load"] = await market.cancel_again()
        report.notes["answers"] = dict(sorted(client.answers.items()))
        report.notes["refusals"] = client.refusals
        await settled(run, market)
    finally:
        await client.close()
    assert report.ok, report.render()
