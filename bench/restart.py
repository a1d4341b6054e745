"""Restart benchmark: outbox latency before and after PostgreSQL restarts.

    uv run python bench/restart.py [--events N] [--after-s S] [--restarts K]

Runs a private PostgreSQL (free loopback port, temporary directory: the shared one is never
touched) and an ``OutboxRelay`` publishing to the local Kafka in a scratch namespace, then
measures commit → consumed latency of one outbox event at a time: a baseline of N events
(default 200), then, after each of K restarts of PostgreSQL (default 2, ``pg_ctl stop -m fast``
and start, as ``gpux infra down/up`` would), events for S seconds (default 10) from the
moment PostgreSQL answers again. It prints the baseline's percentiles, each second after the
restart's p50, how long until latency was back at the baseline (a run of five events each
under twice the baseline p50 plus 5 ms), and the relay's wake-ups (NOTIFY vs the 1 s poll).
Before the relay listened again after a restart, every event waited for that poll: ~0.5 s
on average, ~1 s p99. Not a timed test: it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory

import asyncpg
from aiokafka import AIOKafkaConsumer
from pydantic import SecretStr

from gpux_contracts.events import wrap
from gpux_contracts.ids import new_id
from gpux_contracts.smoke import PingSent
from gpux_contracts.topics import Cleanup, Topic
from gpux_devinfra import infra
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.scratch import drop_namespace
from gpux_devinfra.testing.stores import PrivateStore, private_postgres
from gpux_platform.broker import Outgoing, ensure_topics, make_broker
from gpux_platform.outbox import OutboxRelay
from gpux_platform.settings import Environment, GpuxSettings
from gpux_platform.unit_of_work import PostgresUnitOfWork

SCHEMA = "restartbench"
TOPIC = Topic(
    "restartbench.pings", "ping id", 1, Cleanup.DELETE, "the bench's", payloads=(PingSent,)
)
BACK_RUN = 5
"""Consecutive events under the baseline bound that count as "back at the baseline"."""


@dataclass
class Probe:
    """Commits one outbox event at a time and waits until the consumer got it."""

    pool: asyncpg.Pool
    consumer: AIOKafkaConsumer
    failures: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    async def once(self, timeout_s: float = 10.0) -> float | None:
        """One event's commit → consumed latency in ms (None: PostgreSQL refused the commit)."""
        key = new_id()
        envelope = wrap(PingSent(ping_id=key), producer="bench", occurred_at=datetime.now(UTC))
        started = time.perf_counter()
        try:
            async with PostgresUnitOfWork(self.pool, SCHEMA) as uow:
                uow.outbox.add(Outgoing(TOPIC, key, envelope))
                await uow.commit()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            self.failures += 1
            return None
        async with asyncio.timeout(timeout_s):
            while True:
                batches = await self.consumer.getmany(timeout_ms=100)
                if any(r.key == key.encode() for rs in batches.values() for r in rs):
                    return (time.perf_counter() - started) * 1000


def percentiles(values: list[float]) -> str:
    """p50/p90/p99/max of latencies in ms."""
    if len(values) < 2:
        return "n/a"
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {cuts[49]:.1f}  p90 {cuts[89]:.1f}  p99 {cuts[98]:.1f}  max {max(values):.1f} ms"


async def after_restart(probe: Probe, seconds: float, bound_ms: float) -> tuple[float | None, str]:
    """Events for ``seconds`` after PostgreSQL answers again: when latency was back under
    ``bound_ms`` (seconds after the restart, None: not within), and the p50 of each second."""
    started = time.perf_counter()
    seen: list[tuple[float, float]] = []
    back_at: float | None = None
    run = 0
    while (now := time.perf_counter() - started) < seconds:
        latency = await probe.once()
        if latency is None:
            run = 0
            await asyncio.sleep(0.05)
            continue
        seen.append((now, latency))
        run = run + 1 if latency <= bound_ms else 0
        if run == BACK_RUN and back_at is None:
            back_at = seen[-BACK_RUN][0]
    per_second = []
    for second in range(int(seconds)):
        values = [ms for at, ms in seen if second <= at < second + 1]
        per_second.append(f"{statistics.median(values):.0f}" if values else "-")
    return back_at, " ".join(per_second)


@contextlib.asynccontextmanager
async def bench_setup(
    store: PrivateStore, scratch: Path
) -> AsyncIterator[tuple[Probe, OutboxRelay]]:
    """A pool on the private PostgreSQL, a relay to the local Kafka in a scratch namespace,
    and a consumer of its topic; the namespace's topics are removed afterwards."""
    endpoints = await asyncio.to_thread(infra.up)  # reuses the local one; never stops it
    settings = GpuxSettings(
        env=Environment.TEST,
        kafka_bootstrap=endpoints.kafka_bootstrap,
        database_url=SecretStr(store.url),
        redis_url=endpoints.redis_url,
        namespace=f"r{new_id()[-10:].lower()}.",
    )
    await ensure_topics(settings, [TOPIC])
    broker = make_broker(settings, "restart-bench")
    consumer = AIOKafkaConsumer(
        settings.topic(TOPIC), bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False
    )
    async with migrated_pool(settings, SCHEMA, scratch) as pool:
        await broker.start()
        await consumer.start()
        relay = OutboxRelay(pool, broker, settings, SCHEMA)
        running = asyncio.ensure_future(relay.run())
        try:
            yield Probe(pool, consumer), relay
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            await consumer.stop()
            await broker.stop()
            await drop_namespace(endpoints, settings.namespace)


async def measure(args: argparse.Namespace) -> None:
    with private_postgres() as store, TemporaryDirectory() as scratch:
        async with bench_setup(store, Path(scratch)) as (probe, relay):
            for _ in range(20):  # warm-up: connections, metadata, the JIT-less first sends
                await probe.once()
            baseline = [ms for _ in range(args.events) if (ms := await probe.once()) is not None]
            p50 = statistics.median(baseline)
            bound = 2 * p50 + 5
            print(f"baseline ({len(baseline)} events): {percentiles(baseline)}")
            print(f"back at the baseline: {BACK_RUN} events in a row under {bound:.1f} ms")
            for n in range(1, args.restarts + 1):
                restart_started = time.perf_counter()
                await store.restart()
                down_s = time.perf_counter() - restart_started
                back_at, per_second = await after_restart(probe, args.after_s, bound)
                back = f"{back_at:.2f} s" if back_at is not None else f"not within {args.after_s} s"
                print(
                    f"restart {n}: PostgreSQL down and up in {down_s:.2f} s; back at the baseline"
                    f" after {back}; p50 per second after it (ms): {per_second}"
                )
            stats = relay.stats
            print(
                f"relay: listened {stats.listens}x, woken by NOTIFY {stats.notified}x, by the"
                f" poll {stats.polls}x, LISTEN lost {stats.lost}x; commits refused while"
                f" PostgreSQL was down: {probe.failures}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200, help="baseline events")
    parser.add_argument("--after-s", type=float, default=10.0, help="seconds after a restart")
    parser.add_argument("--restarts", type=int, default=2, help="restarts of PostgreSQL")
    args = parser.parse_args()
    if not (1 <= args.events <= 10_000 and 1 <= args.after_s <= 120 and 1 <= args.restarts <= 10):
        sys.exit("--events 1..10000, --after-s 1..120, --restarts 1..10")
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()
