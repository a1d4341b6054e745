"""The exchange under test: started as ``make up`` starts it (or reused), its lag and CPU.

``started`` runs every service as its own process (``python -m gpux_<name>``, the processes,
order and environment of ``gpux_devinfra.exchange``: the gateway's API and its views apart)
on free loopback ports, with a fresh database and
namespace of its own (removed afterwards with the namespace's topics and Redis keys, also on
error and Ctrl-C), so it never meets ``make up`` or a test session running on the same
machine. Rate limits are raised (the only setting changed). The local
infrastructure is reused when it answers and started (``infra.up``) only when it does not;
it is never stopped.

``LagReader`` reads each consumer group's lag from Kafka: committed offsets against end
offsets, for the groups that read this namespace's topics. ``CpuMeter`` reads the CPU time of
processes and of the machine from /proc (Linux; psutil is not a dependency).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from pipeline_http import HttpClient, HttpError

from gpux_contracts.ids import new_id
from gpux_contracts.topics import REGISTRY
from gpux_devinfra import exchange as make_up
from gpux_devinfra import infra, kafka, postgres, redis
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.endpoints import from_environment
from gpux_devinfra.testing.processes import ServiceProcess
from gpux_devinfra.testing.scratch import drop_namespace, scratch_database
from gpux_devinfra.testing.services import free_port

RAISED_LIMIT = "100000000/minute"


def find_endpoints() -> tuple[Endpoints, str]:
    """The infrastructure to use and where it came from (never stopped by us)."""
    given = from_environment()
    if given is not None:
        return given, "environment (GPUX_KAFKA_BOOTSTRAP, GPUX_DATABASE_URL, GPUX_REDIS_URL)"
    if all(s.answers for s in infra.status()):
        return Endpoints(f"127.0.0.1:{kafka.PORT}", postgres.url(), redis.url()), "running"
    return infra.up(), "started by `gpux infra up` (left running)"


@dataclass
class Exchange:
    """The gateway's URL, the namespace of its topics and groups, and our processes."""

    url: str
    namespace: str
    endpoints: Endpoints
    processes: dict[str, ServiceProcess] = field(default_factory=dict)
    database_url: str = ""

    def pids(self) -> dict[str, int]:
        """The pid of each service we started (none when reused)."""
        return {name: p.proc.pid for name, p in self.processes.items() if p.proc and p.alive}


async def wait_ready(name: str, url: str, process: ServiceProcess, timeout_s: float) -> None:
    """Until ``url``/readyz answers 200; a process that exits is an error."""
    client = HttpClient(url, max_connections=1, timeout_s=2)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if not process.alive:
                raise RuntimeError(f"{name} exited; its log:\n{process.tail(2000)}")
            try:
                if (await client.request("GET", "/readyz")).status == 200:
                    return
            except HttpError:
                pass
            await asyncio.sleep(0.3)
    finally:
        await client.close()
    raise RuntimeError(f"{name} was not ready within {timeout_s:.0f} s")


@contextlib.asynccontextmanager
async def started(endpoints: Endpoints, log_dir: Path) -> AsyncIterator[Exchange]:
    """Every service as its own process on a fresh database and namespace; all stopped, and
    the database, topics and Redis keys removed, after (also on error and Ctrl-C)."""
    namespace = "b" + new_id()[-10:].lower() + "."
    env = make_up.service_env(os.environ, endpoints)
    await asyncio.to_thread(log_dir.mkdir, parents=True, exist_ok=True)
    ports = {service.name: free_port() for service in make_up.SERVICES}
    try:
        async with scratch_database(
            endpoints.database_url, f"gpux_bench_{new_id()[-10:].lower()}"
        ) as database_url:
            env.update(
                GPUX_NAMESPACE=namespace,
                GPUX_DATABASE_URL=database_url,
                GPUX_RATE_LIMIT=RAISED_LIMIT,
                GPUX_ANONYMOUS_RATE_LIMIT=RAISED_LIMIT,
            )
            running = Exchange(
                f"http://127.0.0.1:{ports['gateway']}", namespace, endpoints, {}, database_url
            )
            try:
                for service in make_up.SERVICES:
                    process = ServiceProcess(
                        service.module,
                        {**env, **service.env, "GPUX_HTTP_PORT": str(ports[service.name])},
                        log_dir / f"{service.name}.log",
                    )
                    running.processes[service.name] = process
                    process.start()
                for name, process in running.processes.items():
                    await wait_ready(name, f"http://127.0.0.1:{ports[name]}", process, 120)
                yield running
            finally:
                await asyncio.to_thread(_stop_all, list(running.processes.values()))
    finally:
        await drop_namespace(endpoints, namespace)


def _stop_all(processes: list[ServiceProcess]) -> None:
    for process in processes:
        if process.alive and process.proc is not None:
            process.proc.terminate()
    for process in processes:
        process.stop()  # waits, then SIGKILLs what is still there after 15 s


class LagReader:
    """Each consumer group's lag (end offset minus committed, summed over partitions)."""

    def __init__(self, bootstrap: str, namespace: str) -> None:
        self.bootstrap = bootstrap
        self.namespace = namespace
        self.topics = {namespace + topic.name for topic in REGISTRY}
        self._admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        self._consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)

    async def start(self) -> None:
        """Connect."""
        await self._admin.start()
        await self._consumer.start()

    async def close(self) -> None:
        """Disconnect."""
        await self._consumer.stop()
        await self._admin.close()

    async def _ours(self) -> list[str]:
        groups = await self._admin.list_consumer_groups()
        return sorted(str(g[0]) for g in groups if str(g[0]).startswith(self.namespace))

    async def sample(self) -> dict[str, int]:
        """Lag by group (named without the namespace), for the groups that committed offsets
        on this namespace's topics."""
        committed: dict[str, dict[TopicPartition, int]] = {}
        for group in await self._ours():
            offsets = await self._admin.list_consumer_group_offsets(group)
            mine = {tp: meta.offset for tp, meta in offsets.items() if tp.topic in self.topics}
            if mine:
                committed[group] = mine
        partitions = {tp for offsets in committed.values() for tp in offsets}
        if not partitions:
            return {}
        ends = await self._consumer.end_offsets(list(partitions))
        return {
            group.removeprefix(self.namespace): sum(
                max(0, ends[tp] - max(offset, 0)) for tp, offset in offsets.items()
            )
            for group, offsets in committed.items()
        }

    async def settle(self, timeout_s: float, most: int = 100) -> dict[str, Any]:
        """Wait until no group lags by more than ``most`` records (or ``timeout_s`` passed):
        a phase should not start on the previous one's backlog. How long it took, and the
        lag left."""
        started = time.monotonic()
        lags = await self.sample()
        while max(lags.values(), default=0) > most and time.monotonic() - started < timeout_s:
            await asyncio.sleep(1.0)
            lags = await self.sample()
        left = {group: lag for group, lag in lags.items() if lag > most}
        return {"waited_s": round(time.monotonic() - started, 1), "still_lagging": left}


@dataclass
class LagTrace:
    """Lag samples taken while a phase ran: (seconds since its start, lag by group)."""

    samples: list[tuple[float, dict[str, int]]] = field(default_factory=list)

    def groups(self) -> list[str]:
        """Every group seen."""
        return sorted({g for _, lags in self.samples for g in lags})

    def at(self, seconds: float) -> dict[str, int]:
        """The last sample taken by ``seconds`` into the phase (the first if none was)."""
        if not self.samples:
            return {}
        taken = [lags for at, lags in self.samples if at <= seconds + 0.5]
        return taken[-1] if taken else self.samples[0][1]

    def verdict(self, group: str, duration_s: float, offered: int) -> str:
        """``growing`` if the lag rose in the second half by more than 2.5 % of what was
        offered in the whole phase (and by more than 50 records); else ``flat``."""
        mid = self.at(duration_s / 2).get(group, 0)
        end = self.at(duration_s).get(group, 0)
        return "growing" if end - mid > max(50, offered // 40) else "flat"


async def trace_lag(reader: LagReader, trace: LagTrace, origin: float, every_s: float) -> None:
    """Sample the lag into ``trace`` (times from ``origin``, monotonic) until cancelled."""
    await asyncio.sleep(max(0.0, origin - time.monotonic()))
    while True:
        try:
            trace.samples.append((time.monotonic() - origin, await reader.sample()))
        except Exception as exc:  # the lag is reported, never allowed to stop a run
            trace.samples.append((time.monotonic() - origin, {f"error: {exc}"[:60]: -1}))
        await asyncio.sleep(every_s)


_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def machine_ticks() -> dict[str, int]:
    """The machine's CPU ticks since boot, by kind (first line of /proc/stat)."""
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    values = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return {name: int(value) for name, value in zip(names, values, strict=False)}


@dataclass
class CpuMeter:
    """CPU used between ``start`` and ``stop``: by named process and by the machine."""

    pids: dict[str, int]
    _proc0: dict[str, float] = field(default_factory=dict)
    _machine0: dict[str, int] = field(default_factory=dict)
    _t0: float = 0.0

    def start(self) -> CpuMeter:
        """Take the first reading."""
        self._t0 = time.monotonic()
        self._proc0 = {name: process_cpu_s(pid) for name, pid in self.pids.items()}
        self._machine0 = machine_ticks()
        return self

    def stop(self) -> dict[str, float]:
        """Percent of one core per process, and the machine's busy and softirq percent."""
        wall = max(1e-9, time.monotonic() - self._t0)
        out = {
            name: round(100 * (process_cpu_s(pid) - self._proc0[name]) / wall, 1)
            for name, pid in self.pids.items()
        }
        now = machine_ticks()
        delta = {k: now[k] - self._machine0.get(k, 0) for k in now}
        total = max(1, sum(delta.values()))
        out["machine busy %"] = round(100 * (total - delta["idle"] - delta["iowait"]) / total, 1)
        out["machine softirq %"] = round(100 * delta["softirq"] / total, 1)
        return out
