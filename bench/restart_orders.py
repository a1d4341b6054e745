"""Restart benchmark through the public API: market-order latency before and after PostgreSQL
restarts.

    uv run python bench/restart_orders.py [--orders N] [--after-s S] [--restarts K]

Runs the whole exchange as ``make up`` does (every service its own process) on private
PostgreSQL, Redis and Kafka (free loopback ports, a temporary directory: the shared stores are
never touched), signs up a seller with a large offer and a funded buyer through the REST API,
then measures sequential market orders of one GPU, from ``POST /v1/orders`` until
``GET /v1/orders/{id}`` shows ``filled``: a baseline of N orders (default 40), then, after each
of K restarts of PostgreSQL (default 2; ``pg_ctl stop -m fast`` and start, as ``gpux infra
down/up`` would), orders for S seconds (default 10) from the moment PostgreSQL answers again.
Prints the baseline's percentiles, each second's p50 after a restart and how long until the
latency was back at the baseline (five orders in a row each under twice the baseline p50).
Orders refused while PostgreSQL is down are retried by the client as a user would; their
time counts from the first try. Not a timed test: it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx

from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.exchange import exchange_processes
from gpux_devinfra.testing.http import account, auth, dev_top_up, offer_body, push_offer
from gpux_devinfra.testing.http import get_until as until
from gpux_devinfra.testing.stores import (
    PrivateStore,
    private_kafka,
    private_postgres,
    private_redis,
)

RAISED_LIMIT = "100000000/minute"
NAMESPACE = "restart-orders."
GPU = "rtx-4090"
BACK_RUN = 5
"""Orders in a row under twice the baseline p50 that count as back at the baseline."""


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=40, help="baseline orders")
    parser.add_argument("--after-s", type=float, default=10.0, help="seconds after a restart")
    parser.add_argument("--restarts", type=int, default=2)
    return parser.parse_args()


async def _market(client: httpx.AsyncClient) -> str:
    """A seller's offer of many GPUs and a funded buyer; the buyer's key."""
    seller = await account(client, "seller")
    buyer = await account(client, "buyer")
    made = await push_offer(client, seller, offer_body("0.30", "EUR", 4_000, gpu=GPU))
    await until(client, f"/v1/offers/{made['id']}", lambda b: b["status"] == "live", key=seller)
    await dev_top_up(client, buyer, "100000.00", "EUR")
    return buyer


async def _order(client: httpx.AsyncClient, buyer: str) -> float:
    """One market order of one GPU until it shows ``filled``; milliseconds from its first try."""
    body = {"gpu": GPU, "gpus": 1, "currency": "EUR", "tier": "on_demand", "hours": 1}
    body |= {"type": "market", "max_price_per_gpu_hour": "0.50"}
    started = time.perf_counter()
    while True:
        try:
            made = await client.post("/v1/orders", json=body, headers=auth(buyer))
            if made.status_code == 202:
                break
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.05)  # refused while PostgreSQL is down: try again
    order_id = made.json()["id"]
    while True:
        try:
            shown = await client.get(f"/v1/orders/{order_id}", headers=auth(buyer))
            if shown.status_code == 200 and shown.json()["status"] == "filled":
                return (time.perf_counter() - started) * 1000
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.002)


def _percentiles(values: list[float]) -> str:
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (
        f"p50 {statistics.median(ordered):.1f}, p90 {at(0.9):.1f}, p99 {at(0.99):.1f},"
        f" max {ordered[-1]:.1f} ms"
    )


async def _after_restart(
    client: httpx.AsyncClient, buyer: str, postgres: PrivateStore, after_s: float, base: float
) -> str:
    """Restart PostgreSQL, then orders for ``after_s`` from when it answers; one line."""
    down = time.perf_counter()
    await postgres.restart()
    answered = time.perf_counter()
    per_second: dict[int, list[float]] = defaultdict(list)
    back_at: float | None = None
    run = 0
    while time.perf_counter() - answered < after_s:
        sent = time.perf_counter() - answered
        latency = await _order(client, buyer)
        per_second[int(sent)].append(latency)
        run = run + 1 if latency < 2 * base else 0
        if run == BACK_RUN and back_at is None:
            back_at = sent
    seconds = " ".join(
        f"{statistics.median(per_second[s]):.0f}" for s in sorted(per_second) if per_second[s]
    )
    back = "not within the window" if back_at is None else f"{back_at:.2f} s after it answered"
    return (
        f"restart: down and up in {answered - down:.2f} s; back at the baseline {back};"
        f" p50 per second after it (ms): {seconds}"
    )


async def _measure(args: argparse.Namespace, stores: dict[str, PrivateStore]) -> None:
    endpoints = Endpoints(stores["kafka"].url, stores["postgres"].url, stores["redis"].url)
    settings = {"GPUX_RATE_LIMIT": RAISED_LIMIT, "GPUX_ANONYMOUS_RATE_LIMIT": RAISED_LIMIT}
    with (
        TemporaryDirectory(prefix="gpux-restart-orders-") as logs,
        exchange_processes(endpoints, NAMESPACE, Path(logs), settings) as exchange,
    ):
        exchange.start()
        await exchange.ready()
        async with httpx.AsyncClient(base_url=exchange.url, timeout=30) as client:
            buyer = await _market(client)
            await _order(client, buyer)  # warm
            baseline = [await _order(client, buyer) for _ in range(args.orders)]
            base = statistics.median(baseline)
            print(f"baseline, {args.orders} sequential market orders: {_percentiles(baseline)}")
            for _ in range(args.restarts):
                print(await _after_restart(client, buyer, stores["postgres"], args.after_s, base))


def main() -> None:
    args = _arguments()
    print(f"load average at start {os.getloadavg()}; {os.cpu_count()} cores", flush=True)
    with private_postgres() as postgres, private_redis() as redis, private_kafka() as kafka:
        stores = {"postgres": postgres, "redis": redis, "kafka": kafka}
        asyncio.run(_measure(args, stores))
    print(f"load average at end {os.getloadavg()}", file=sys.stdout)


if __name__ == "__main__":
    main()
