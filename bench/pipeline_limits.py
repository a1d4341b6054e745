"""The limits of this box, measured in the same run as the pipeline: the REST front door and
the broker.

The front door: bench/pipeline_limit_app.py (a minimal FastAPI app, one asyncpg INSERT per
POST /v1/orders, in its own process) on a scratch database of its own, driven by the same
client processes as the pipeline in a closed loop (``FRONT_DOOR_CONNECTIONS`` requests in
flight) for a while. Whatever the pipeline does beyond that is what it costs.

The broker: an aiokafka producer (idempotent, ``acks=all``, ``linger_ms=2``, as gpux's) and a
consumer on a scratch topic of the namespace: sequential produce→consume round trips, then a
burst of messages the size of a gpux event from first send to last receive.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from pipeline_http import HttpClient, HttpError
from pipeline_limit_app import SCRATCH_TABLE
from pipeline_load import Job, encode, split
from pipeline_market import order_body
from pipeline_phase import Bench, load_figures, measured
from pipeline_report import percentiles

from gpux_contracts.ids import new_id
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.system import state_dir
from gpux_devinfra.testing.scratch import scratch_database
from gpux_devinfra.testing.services import free_port

APP = Path(__file__).resolve().with_name("pipeline_limit_app.py")
FRONT_DOOR_CONNECTIONS = 64
EVENT_BYTES = 600  # about one gpux envelope of an order command


def uvicorn_stack() -> str:
    """What uvicorn's ``auto`` picks here: the event loop and the HTTP parser."""
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"uvicorn {loop}/{http}"


async def create_scratch(dsn: str) -> None:
    """The limit app's table, empty."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP TABLE IF EXISTS {SCRATCH_TABLE}")
        await conn.execute(
            f"CREATE TABLE {SCRATCH_TABLE} (id text PRIMARY KEY, body jsonb NOT NULL,"
            " created_at timestamptz NOT NULL DEFAULT now())"
        )
    finally:
        await conn.close()


async def drop_scratch(dsn: str) -> None:
    """Remove the limit app's table."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP TABLE IF EXISTS {SCRATCH_TABLE}")
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def limit_app(port: int, dsn: str, log: Path) -> AsyncIterator[tuple[str, int]]:
    """The limit app in its own process, on a scratch table; its URL and pid. Stopped and
    the table dropped after."""
    await create_scratch(dsn)
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: ASYNC220 - started once, waited for below
            [sys.executable, str(APP), "serve", str(port), dsn],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        client = HttpClient(f"http://127.0.0.1:{port}", max_connections=1, timeout_s=2)
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the limit app did not start; see {log}")
            try:
                if (await client.request("GET", "/readyz")).status == 200:
                    break
            except HttpError:
                await asyncio.sleep(0.2)
        await client.close()
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 10)
        except subprocess.TimeoutExpired:
            process.kill()
        await drop_scratch(dsn)


async def broker_limit(
    bootstrap: str, topic: str, *, round_trips: int, burst: int
) -> dict[str, Any]:
    """Sequential produce→consume round trips, then a burst's throughput, on a scratch topic."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=2
    )
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    partition = TopicPartition(topic, 0)
    try:
        await producer.start()
        await consumer.start()
        consumer.assign([partition])
        await consumer.seek_to_beginning(partition)
        rtts = await _round_trips(producer, consumer, topic, round_trips)
        produced_s, received_s = await _burst(producer, consumer, topic, burst)
    finally:
        await producer.stop()
        await consumer.stop()
        with contextlib.suppress(Exception):
            await admin.delete_topics([topic])
        await admin.close()
    return {
        "round_trip_s": rtts,
        "burst": burst,
        "produce_per_s": round(burst / produced_s),
        "produce_consume_per_s": round(burst / received_s),
    }


def _payload(index: int) -> bytes:
    head = json.dumps({"i": index, "t": time.monotonic()}).encode()
    return head + b" " * max(0, EVENT_BYTES - len(head))


async def _round_trips(producer: Any, consumer: Any, topic: str, count: int) -> list[float]:
    rtts: list[float] = []
    for index in range(count):
        started = time.monotonic()
        await producer.send_and_wait(topic, _payload(index))
        await consumer.getone()
        rtts.append(time.monotonic() - started)
    return rtts


async def _burst(producer: Any, consumer: Any, topic: str, count: int) -> tuple[float, float]:
    started = time.monotonic()

    async def receive() -> float:
        seen = 0
        while seen < count:
            batches = await consumer.getmany(timeout_ms=1000, max_records=5000)
            seen += sum(len(records) for records in batches.values())
        return time.monotonic() - started

    receiving = asyncio.create_task(receive())
    sends = [await producer.send(topic, _payload(index)) for index in range(count)]
    await asyncio.gather(*sends)
    produced = time.monotonic() - started
    received = await asyncio.wait_for(receiving, timeout=120)
    return produced, received


async def front_door(bench: Bench, url: str, pid: int, duration_s: float) -> dict[str, Any]:
    """The limit app's most POST/s, in a closed loop from the client processes."""
    workers = bench.workers.count
    per_worker = max(1, FRONT_DOOR_CONNECTIONS // workers)
    jobs = [
        Job(
            url=url,
            calls=[("POST", "/v1/orders", encode(order_body("h100-sxm")))],
            keys=["gpx_benchlimit_" + "0" * 43],  # a header the size of a real key
            count=10_000_000,
            start_at=0.0,
            concurrency=per_worker,
            duration_s=duration_s,
            connections=per_worker,
        )
        for _ in split(workers, workers)
    ]
    phase = await measured(bench, jobs, duration_s, 5, pids={"limit app": pid})
    return {
        "stack": uvicorn_stack(),
        "connections": per_worker * workers,
        "duration_s": duration_s,
        **load_figures(phase.load, duration_s),
        "cpu_pct": phase.cpu,
    }


async def limits_section(
    bench: Bench,
    endpoints: Endpoints,
    namespace: str,
    *,
    duration_s: float,
    round_trips: int,
    burst: int,
) -> dict[str, Any]:
    """The front door's and the broker's limits on this box."""
    log = state_dir() / "logs" / "bench" / "limit-app.log"
    await asyncio.to_thread(log.parent.mkdir, parents=True, exist_ok=True)
    async with (
        scratch_database(
            endpoints.database_url, f"gpux_bench_limit_{new_id()[-10:].lower()}"
        ) as dsn,
        limit_app(free_port(), dsn, log) as (url, pid),
    ):
        door = await front_door(bench, url, pid, duration_s)
    topic = f"{namespace}bench.limit.{new_id()[-8:].lower()}"
    broker = await broker_limit(
        endpoints.kafka_bootstrap, topic, round_trips=round_trips, burst=burst
    )
    broker["round_trips"] = round_trips
    broker["round_trip"] = percentiles(broker.pop("round_trip_s"))
    return {"front_door": door, "broker": broker}
