"""The pipeline benchmark's load generator: open and closed loops in client processes.

Each worker is its own process (``spawn``), so the clients get a core of their own when the
machine has one to give, and each reports the CPU it used (``time.process_time``): the
benchmark prints it, to show the generator is not the bottleneck.

An open loop sends request ``i`` at ``start + i / rate`` whatever happened to the earlier ones
(latency is measured from that due time, so a slow server is not hidden by a client that waits
for it); a closed loop keeps ``concurrency`` requests in flight for a while (the most a server
answers). A sample of requests is *followed*: the worker polls the resource until the change
is visible (an order final, an offer at its new price) and records how long that took from
the request's due time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import queue
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from multiprocessing.context import SpawnProcess
from typing import Any, Literal

from pipeline_http import HttpClient, HttpError, Response

FIRST_POLL_S = 0.002
FINAL_ORDER = frozenset({"filled", "cancelled", "expired", "rejected"})
Call = tuple[str, str, bytes | None]
"""method, path, body: one request; a job's calls are cycled."""
Follow = Literal["", "order", "offer_price"]


@dataclass(frozen=True)
class Job:
    """What one worker sends: ``count`` calls at ``rate``/s (open) or ``concurrency`` (closed)."""

    url: str
    calls: list[Call]
    keys: list[str]
    count: int
    start_at: float
    """``time.time()`` when the first request is due (every worker starts together)."""
    rate: float = 0.0
    """Requests per second (open loop); 0: closed loop."""
    concurrency: int = 0
    duration_s: float = 0.0
    """Closed loop: stop sending after this long (or after ``count``)."""
    follow: Follow = ""
    sample_every: int = 0
    follow_timeout_s: float = 30.0
    collect_ids: bool = False
    connections: int = 256
    max_in_flight: int = 4000


@dataclass
class LoadResult:
    """What one worker (or, merged, all of them) saw."""

    sent: int = 0
    skipped: int = 0
    """Open loop: due while ``max_in_flight`` requests were still waiting (not sent)."""
    statuses: Counter[str] = field(default_factory=Counter)
    retry_after: Counter[str] = field(default_factory=Counter)
    """Responses carrying Retry-After, by status."""
    latency_s: list[float] = field(default_factory=list)
    """Due (or sent) to response, for 2xx answers."""
    accepted: list[tuple[int, str]] = field(default_factory=list)
    """(key index, id) of each 2xx answer, with ``collect_ids``."""
    follow_s: list[float] = field(default_factory=list)
    follow_outcomes: Counter[str] = field(default_factory=Counter)
    follow_polls: int = 0
    """GETs the followed requests took (load they added)."""
    errors: Counter[str] = field(default_factory=Counter)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    workers: int = 1

    def merge(self, other: LoadResult) -> LoadResult:
        """Both results added up (CPU and workers summed, wall the longest)."""
        return LoadResult(
            sent=self.sent + other.sent,
            skipped=self.skipped + other.skipped,
            statuses=self.statuses + other.statuses,
            retry_after=self.retry_after + other.retry_after,
            latency_s=self.latency_s + other.latency_s,
            accepted=self.accepted + other.accepted,
            follow_s=self.follow_s + other.follow_s,
            follow_outcomes=self.follow_outcomes + other.follow_outcomes,
            follow_polls=self.follow_polls + other.follow_polls,
            errors=self.errors + other.errors,
            cpu_s=self.cpu_s + other.cpu_s,
            wall_s=max(self.wall_s, other.wall_s),
            workers=self.workers + other.workers,
        )


def _headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


class _Runner:
    """One worker's loop over its job."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.result = LoadResult()
        self.client = HttpClient(job.url, max_connections=job.connections, timeout_s=30.0)
        self.headers = [_headers(k) for k in job.keys] or [{}]
        self.tasks: set[asyncio.Task[None]] = set()

    def _record(self, response: Response, index: int, elapsed_s: float) -> bool:
        status = str(response.status)
        self.result.statuses[status] += 1
        if "retry-after" in response.headers:
            self.result.retry_after[status] += 1
        if response.status >= 300:
            return False
        self.result.latency_s.append(elapsed_s)
        if self.job.collect_ids:
            body = response.json()
            self.result.accepted.append((index % len(self.headers), str(body["id"])))
        return True

    async def one(self, index: int, due: float) -> None:
        method, path, body = self.job.calls[index % len(self.job.calls)]
        headers = self.headers[index % len(self.headers)]
        try:
            response = await self.client.request(method, path, body=body, headers=headers)
        except HttpError as exc:
            self.result.statuses["error"] += 1
            self.result.errors[str(exc)[:80]] += 1
            return
        elapsed = time.monotonic() - due
        ok = self._record(response, index, elapsed)
        sampled = self.job.sample_every and index % self.job.sample_every == 0
        if ok and sampled and self.job.follow:
            await self._follow(response, path, body, headers, due)

    async def _follow(
        self,
        response: Response,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        due: float,
    ) -> None:
        if self.job.follow == "order":
            target = f"/v1/orders/{response.json()['id']}"
            wanted: Decimal | None = None
        else:
            target = path
            wanted = Decimal(json.loads(body or b"{}")["price_per_gpu_hour"])
        delay = FIRST_POLL_S
        deadline = due + self.job.follow_timeout_s
        while time.monotonic() < deadline:
            await asyncio.sleep(delay)
            # Resolution within 20 % of the time so far, so that slow changes are not
            # polled hard: reads are load on the gateway too.
            delay = max(FIRST_POLL_S, min(delay * 1.5, 0.2 * (time.monotonic() - due)))
            self.result.follow_polls += 1
            try:
                seen = await self.client.request("GET", target, headers=headers)
            except HttpError:
                continue
            if seen.status != 200:
                continue
            state = seen.json()
            if wanted is None and state["status"] in FINAL_ORDER:
                self.result.follow_outcomes[state["status"]] += 1
                self.result.follow_s.append(time.monotonic() - due)
                return
            if wanted is not None and Decimal(state["price_per_gpu_hour"]) == wanted:
                self.result.follow_outcomes["reflected"] += 1
                self.result.follow_s.append(time.monotonic() - due)
                return
        self.result.follow_outcomes["not seen in time"] += 1

    def _launch(self, index: int, due: float) -> None:
        task = asyncio.create_task(self.one(index, due))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def open_loop(self, start: float) -> None:
        job = self.job
        for index in range(job.count):
            due = start + index / job.rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(self.tasks) >= job.max_in_flight:
                self.result.skipped += 1
                continue
            self.result.sent += 1
            self._launch(index, due)

    async def closed_loop(self, start: float) -> None:
        job = self.job
        stop = start + job.duration_s
        counter = iter(range(job.count))

        async def lane() -> None:
            for index in counter:
                if time.monotonic() >= stop:
                    return
                self.result.sent += 1
                await self.one(index, time.monotonic())

        await asyncio.gather(*(lane() for _ in range(job.concurrency)))

    async def run(self) -> LoadResult:
        start = time.monotonic() + max(0.0, self.job.start_at - time.time())
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        cpu0 = time.process_time()
        try:
            if self.job.rate > 0:
                await self.open_loop(start)
            else:
                await self.closed_loop(start)
            if self.tasks:
                await asyncio.wait(set(self.tasks), timeout=self.job.follow_timeout_s + 35)
        finally:
            for task in self.tasks:
                task.cancel()
            await self.client.close()
        self.result.cpu_s = time.process_time() - cpu0
        self.result.wall_s = time.monotonic() - start
        return self.result


def run_job(job: Job) -> LoadResult:
    """Run one job to the end in this process."""
    return asyncio.run(_Runner(job).run())


def _worker(inbox: Any, outbox: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us
    while True:
        job = inbox.get()
        if job is None:
            return
        try:
            outbox.put(("ok", run_job(job)))
        except Exception as exc:
            outbox.put(("error", f"{type(exc).__name__}: {exc}"))


class LoadWorkers:
    """``count`` client processes, started once, each running one job at a time."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipes = [(context.Queue(), context.Queue()) for _ in range(count)]
        self._processes: list[SpawnProcess] = [
            context.Process(target=_worker, args=pipe, daemon=True) for pipe in self._pipes
        ]
        for process in self._processes:
            process.start()

    @property
    def count(self) -> int:
        """How many workers there are."""
        return len(self._processes)

    async def run(self, jobs: list[Job], timeout_s: float) -> LoadResult:
        """One job per worker (at most ``count``), all results merged."""
        assert 0 < len(jobs) <= self.count
        for (inbox, _), job in zip(self._pipes, jobs, strict=False):
            inbox.put(job)
        results = [await self._result(outbox, timeout_s) for _, outbox in self._pipes[: len(jobs)]]
        merged = results[0]
        for other in results[1:]:
            merged = merged.merge(other)
        return merged

    async def _result(self, outbox: Any, timeout_s: float) -> LoadResult:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                kind, value = outbox.get_nowait()
            except queue.Empty:
                await asyncio.sleep(0.05)
                continue
            if kind == "error":
                raise RuntimeError(f"a load worker failed: {value}")
            assert isinstance(value, LoadResult)
            return value
        raise TimeoutError(f"a load worker gave no result within {timeout_s:.0f} s")

    def close(self) -> None:
        """Ask every worker to stop; terminate those that do not within 3 s."""
        for inbox, _ in self._pipes:
            with contextlib.suppress(OSError, ValueError):
                inbox.put_nowait(None)
        for process in self._processes:
            process.join(3)
            if process.is_alive():
                process.terminate()
                process.join(2)
        for inbox, outbox in self._pipes:
            inbox.close()
            outbox.close()


def split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` nearly equal shares."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def encode(body: dict[str, Any]) -> bytes:
    """A JSON request body."""
    return json.dumps(body, separators=(",", ":")).encode()
