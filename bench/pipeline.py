"""Pipeline benchmark: the whole exchange, driven through its public API like real clients.

    uv run python bench/pipeline.py [--quick] [--sections limits,latency,open,sellers]
        [--rates 100,300,1000,2000] [--duration 60] [--offers 10000] [--reprice-rate 2000]
        [--reuse http://127.0.0.1:8000 [--namespace NS]] [--clients 2] [--json PATH]

It starts the exchange as ``make up`` does (every service its own process, rate limits
raised), on a fresh database and namespace and free loopback ports of its own, so it never
meets ``make up`` or a test session on the same machine; or, with ``--reuse URL``, drives an
exchange already running there. The local infrastructure is reused (started only when it
does not answer, never stopped). Everything goes through the REST API and the price stream:

- limits: a minimal FastAPI app answering the same POST /v1/orders with one asyncpg INSERT
  (the REST front door on this box) and an aiokafka produce→consume round trip (the broker);
- latency: sequential market orders, POST → 202, → filled (GET), → best ask changed (stream);
- open: open loops at fixed offered rates (many buyers): accepted and filled rates, latency,
  each consumer group's lag (mid and end of the window, flat or growing); then one more at
  3× the best filled rate, for backpressure (202 / 429 / 503 and Retry-After);
- sellers: offers in bulk until all are live and the best ask is right, then sustained
  re-pricing with the best ask, the stream and the seller's own view followed.

The load comes from ``--clients`` processes (bench/pipeline_load.py, a small asyncio HTTP
client: bench/pipeline_http.py), each printing its CPU. Every phase is bounded in count and
time; everything the run started (services, the limit app, clients) is stopped on exit, on
Ctrl-C and on error, and its database, topics and Redis keys are removed. Prints a table per
section, then the figures as one JSON line (also written to ``--json PATH``). A benchmark
reports; it never passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import sys
import time
from pathlib import Path
from typing import Any

from pipeline_exchange import Exchange, LagReader, find_endpoints, started
from pipeline_limits import limits_section
from pipeline_load import LoadWorkers
from pipeline_market import Api, Liquidity, sign_up, wait_catalog
from pipeline_orders import capacity, latency_section, open_phase
from pipeline_phase import Bench
from pipeline_sellers import sellers_section
from pipeline_tables import (
    latency_table,
    limits_tables,
    open_tables,
    sellers_tables,
    summary_table,
)

from gpux_devinfra.system import state_dir

SECTIONS = ("limits", "latency", "open", "sellers")
FULL = {
    "rates": "100,300,1000,2000",
    "duration": 60.0,
    "offers": 10_000,
    "reprice_rate": 2000.0,
    "latency_orders": 200,
    "buyers": 50,
    "limit_s": 15.0,
    "round_trips": 200,
    "burst": 50_000,
    "live_timeout": 600.0,
}
QUICK = {
    "rates": "50,100,200",
    "duration": 10.0,
    "offers": 300,
    "reprice_rate": 100.0,
    "latency_orders": 30,
    "buyers": 10,
    "limit_s": 5.0,
    "round_trips": 50,
    "burst": 5_000,
    "live_timeout": 60.0,
}
LIMITS = {"duration": 600.0, "offers": 100_000, "reprice_rate": 20_000.0, "rate": 20_000.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Flags; ``--quick`` changes the defaults, explicit flags win."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of about 3 minutes")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--rates", help="offered orders/s, comma-separated")
    parser.add_argument("--duration", type=float, help="seconds per rate and for re-pricing")
    parser.add_argument("--offers", type=int, help="bulk offers of the sellers section")
    parser.add_argument("--reprice-rate", type=float, help="PATCH/s of the sellers section")
    parser.add_argument("--latency-orders", type=int, help="sequential orders")
    parser.add_argument("--buyers", type=int, help="buyers per open-loop phase")
    parser.add_argument("--clients", type=int, default=min(4, os.cpu_count() or 2))
    parser.add_argument("--reuse", metavar="URL", help="drive the gateway running at URL")
    parser.add_argument("--namespace", default="", help="with --reuse: its GPUX_NAMESPACE")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    args.rates = [float(r) for r in str(args.rates).split(",") if r.strip()]
    args.sections = [s.strip() for s in str(args.sections).split(",") if s.strip()]
    _check(parser, args)
    return args


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    if not 0 < args.duration <= LIMITS["duration"]:
        parser.error(f"--duration must be in (0, {LIMITS['duration']:g}] s")
    if not all(0 < r <= LIMITS["rate"] for r in args.rates):
        parser.error(f"--rates must be in (0, {LIMITS['rate']:g}] orders/s")
    if not 0 < args.offers <= LIMITS["offers"]:
        parser.error(f"--offers must be in (0, {LIMITS['offers']:,}]")
    if not 0 < args.reprice_rate <= LIMITS["reprice_rate"]:
        parser.error(f"--reprice-rate must be in (0, {LIMITS['reprice_rate']:g}]")
    if not 0 < args.latency_orders <= 4000 or not 0 < args.buyers <= 1000:
        parser.error("--latency-orders must be in (0, 4000], --buyers in (0, 1000]")
    if not 1 <= args.clients <= 16:
        parser.error("--clients must be in [1, 16]")


def machine() -> str:
    """This machine in one line."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split("\n", 1)[0].split()[1])
        memory = f", {kib / 1024**2:.1f} GiB"
    return (
        f"{os.cpu_count()} cores ({model}){memory}, {platform.system()} {platform.release()},"
        f" Python {platform.python_version()}"
    )


def emit(text: str) -> None:
    """Print a table now (a long run shows each section as it ends)."""
    print(text, flush=True)


async def _open_section(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    api = bench.api
    bench.liquidity = Liquidity(await sign_up(api, "bench liquidity seller", ["seller"]))
    drain_s = 5.0 if args.quick else max(30.0, args.duration)
    phases: list[dict[str, Any]] = []
    for rate in args.rates:
        phase = await open_phase(bench, rate, args.duration, buyers=args.buyers, drain_s=drain_s)
        phases.append({"label": "open", **phase})
        emit(f"open loop at {rate:g}/s done: {phase['filled_per_s_in_window']} filled/s")
    best = capacity(phases)
    pressure = round(3 * max(best, 10.0), 1)
    phase = await open_phase(
        bench,
        pressure,
        5.0 if args.quick else min(args.duration, 20.0),
        buyers=args.buyers,
        drain_s=drain_s,
    )
    phases.append({"label": "3× capacity", **phase})
    emit(open_tables(phases))
    return {"phases": phases, "capacity_filled_per_s": best, "backpressure_offered_per_s": pressure}


def _ratios(result: dict[str, Any]) -> dict[str, float]:
    limits = result.get("limits")
    opened = result.get("open")
    if not limits or not opened:
        return {}
    door = float(limits["front_door"]["accepted_per_s"]) or 1.0
    broker = float(limits["broker"]["produce_consume_per_s"]) or 1.0
    best_accepted = max(float(p["accepted_per_s"]) for p in opened["phases"])
    best_filled = float(opened["capacity_filled_per_s"])
    return {
        "pipeline filled/s / front door POST/s": round(best_filled / door, 6),
        "pipeline accepted/s / front door POST/s": round(best_accepted / door, 6),
        "pipeline filled/s / broker messages/s": round(best_filled / broker, 6),
    }


async def _sections(bench: Bench, ex: Exchange, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {}
    await wait_catalog(bench.api)
    if "limits" in args.sections:
        result["limits"] = await limits_section(
            bench, ex.endpoints, ex.namespace, duration_s=args.limit_s,
            round_trips=args.round_trips, burst=args.burst,
        )  # fmt: skip
        emit(limits_tables(result["limits"]))
    if "latency" in args.sections:
        result["latency"] = await latency_section(bench, args.latency_orders)
        emit(latency_table(result["latency"]))
    if "open" in args.sections:
        result["open"] = await _open_section(bench, args)
    if "sellers" in args.sections:
        result["sellers"] = await sellers_section(
            bench, offers=args.offers, rate=args.reprice_rate,
            duration_s=args.duration, live_timeout_s=args.live_timeout,
        )  # fmt: skip
        emit(sellers_tables(result["sellers"]))
    return result


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every section asked for, on a started or reused exchange; the figures."""
    result: dict[str, Any] = {
        "command": " ".join(["uv run python bench/pipeline.py", *sys.argv[1:]]),
        "machine": machine(),
        "load_average_start": [round(v, 2) for v in os.getloadavg()],
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    endpoints, source = await asyncio.to_thread(find_endpoints)  # it runs its own loop
    load = result["load_average_start"]
    emit(f"{result['machine']}\ninfrastructure: {source}; load average {load}")
    async with contextlib.AsyncExitStack() as stack:
        if args.reuse:
            ex = Exchange(args.reuse.rstrip("/"), args.namespace, endpoints)
        else:
            emit("starting the exchange (every service its own process)…")
            ex = await stack.enter_async_context(started(endpoints, state_dir() / "logs" / "bench"))
        result["exchange"] = {"url": ex.url, "namespace": ex.namespace, "reused": bool(args.reuse)}
        emit(f"exchange at {ex.url}, namespace {ex.namespace!r}")
        workers = LoadWorkers(args.clients)
        stack.callback(workers.close)
        api = Api(ex.url)
        stack.push_async_callback(api.close)
        lag = LagReader(endpoints.kafka_bootstrap, ex.namespace)
        await lag.start()
        stack.push_async_callback(lag.close)
        bench = Bench(api, workers, lag, ex.pids(), args.quick)
        result.update(await _sections(bench, ex, args))
    result["ratios"] = _ratios(result)
    result["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    return result


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """``run``, cancelled by the first Ctrl-C or SIGTERM; later ones are ignored so that the
    clean-up (stopping what we started, dropping the database) is not cut short. Installed on
    the loop because a launcher may have started us with SIGINT ignored (a background job)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if not task.cancelling():
            print("stopping everything the benchmark started…", file=sys.stderr, flush=True)
            task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    return await run(args)


def main() -> None:
    """Run, print the summary and the JSON line."""
    args = parse_args()
    try:
        result = asyncio.run(main_async(args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: everything the benchmark started was stopped", file=sys.stderr)
        raise SystemExit(130) from None
    emit(summary_table(result))
    line = json.dumps(result, default=str, ensure_ascii=False)
    if args.json:
        args.json.write_text(line + "\n")
    print(line)


if __name__ == "__main__":
    main()
