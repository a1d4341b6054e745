"""What every measured phase shares: the bench's handles, and a phase run with its lag and CPU."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Any

from pipeline_exchange import CpuMeter, LagReader, LagTrace, trace_lag
from pipeline_load import Job, LoadResult, LoadWorkers
from pipeline_market import Api, Liquidity
from pipeline_report import percentiles

START_DELAY_S = 2.0  # the workers get their jobs, then all start together


@dataclass
class Bench:
    """The handles every section uses."""

    api: Api
    workers: LoadWorkers
    lag: LagReader
    pids: dict[str, int]
    quick: bool
    liquidity: Liquidity | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Measured:
    """One phase: what the clients saw, the lag while it ran, the CPU while it was offered."""

    load: LoadResult
    lag: LagTrace
    cpu: dict[str, float]
    start_epoch: float
    duration_s: float


async def measured(
    bench: Bench,
    jobs: list[Job],
    duration_s: float,
    tail_s: float,
    pids: dict[str, int] | None = None,
) -> Measured:
    """Run ``jobs`` on the workers (all starting together), tracing lag and CPU meanwhile
    (of ``pids``, by default the exchange's services)."""
    start_epoch = time.time() + START_DELAY_S
    origin = time.monotonic() + START_DELAY_S
    jobs = [dataclasses.replace(job, start_at=start_epoch) for job in jobs]
    trace = LagTrace()
    tracer = asyncio.create_task(trace_lag(bench.lag, trace, origin, 1.0 if bench.quick else 2.0))
    meter = CpuMeter({**(bench.pids if pids is None else pids), "bench": os.getpid()})
    cpu: dict[str, float] = {}

    async def meter_window() -> None:
        await asyncio.sleep(max(0.0, origin - time.monotonic()))
        meter.start()
        await asyncio.sleep(duration_s)
        cpu.update(meter.stop())

    metering = asyncio.create_task(meter_window())
    try:
        load = await bench.workers.run(jobs, timeout_s=START_DELAY_S + duration_s + tail_s + 60)
        await metering
    finally:
        tracer.cancel()
        metering.cancel()
    return Measured(load, trace, cpu, start_epoch, duration_s)


def generator_cpu(load: LoadResult) -> dict[str, float]:
    """The load generator's own CPU: per worker (% of a core) and in all."""
    wall = max(1e-9, load.wall_s)
    return {
        "workers": load.workers,
        "cpu_s": round(load.cpu_s, 2),
        "avg_core_pct_per_worker": round(100 * load.cpu_s / wall / max(1, load.workers), 1),
    }


def lag_summary(trace: LagTrace, duration_s: float, offered: int) -> dict[str, Any]:
    """Per group: lag at the middle and the end of the phase, and whether it grew."""
    mid, end = trace.at(duration_s / 2), trace.at(duration_s)
    return {
        group: {
            "mid": mid.get(group),
            "end": end.get(group),
            "trend": trace.verdict(group, duration_s, offered),
        }
        for group in trace.groups()
    }


def load_figures(load: LoadResult, duration_s: float) -> dict[str, Any]:
    """What the clients saw of one phase."""
    accepted = sum(v for k, v in load.statuses.items() if k.startswith("2"))
    return {
        "sent": load.sent,
        "skipped_client_side": load.skipped,
        "statuses": dict(load.statuses),
        "with_retry_after": dict(load.retry_after),
        "errors": dict(load.errors.most_common(3)),
        "accepted": accepted,
        "accepted_per_s": round(accepted / duration_s, 1),
        "response_latency": percentiles(load.latency_s),
        "followed": dict(load.follow_outcomes),
        "follow_polls_per_s": round(load.follow_polls / max(1e-9, load.wall_s), 1),
        "follow_latency": percentiles(load.follow_s),
        "generator": generator_cpu(load),
    }
