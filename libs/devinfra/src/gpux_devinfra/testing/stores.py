"""Private stores for tests that stop or restart one: a PostgreSQL, a Redis or a Kafka broker
of the test's own, on free loopback ports in a temporary directory, removed afterwards.

The shared stores (``gpux infra``) serve every test session on the machine and are never
stopped; a restart test runs against one of these instead. ``stop``, ``start`` and
``restart`` are coroutines that do the blocking work in a thread, so the test's event loop
(and the clients under test on it) keeps running while the store goes away and comes back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gpux_devinfra import kafka, postgres, redis
from gpux_devinfra.system import is_root

T = TypeVar("T")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class PrivateStore:
    """One private store: how to start and stop it, and how many times it was restarted."""

    name: str
    url: str
    """Where clients connect (a URL, or the bootstrap address of a broker)."""
    _start: Callable[[], str]
    _stop: Callable[[], object]
    restarts: int = 0

    async def stop(self) -> None:
        """Stop the store (its clients' connections are closed); returns once it is down."""
        await asyncio.to_thread(self._stop)

    async def start(self) -> None:
        """Start the store again; returns once it answers."""
        await asyncio.to_thread(self._start)

    async def restart(self) -> None:
        """Stop, then start: the outage a store's restart is."""
        await self.stop()
        await self.start()
        self.restarts += 1


@contextlib.contextmanager
def _directory(prefix: str) -> Iterator[Path]:
    # Under /tmp itself, not pytest's tmp_path: initdb and postgres run as the postgres user
    # when we are root, and pytest's directories are private to root.
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if is_root():
        shutil.chown(path, "postgres", "postgres")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _blocking(work: Callable[[], T]) -> T:
    """Run ``work`` in a thread of its own: the launchers' probes run an event loop of their
    own (``asyncio.run``), which they cannot inside a test's running loop."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()


@contextlib.contextmanager
def _running(
    name: str, up: Callable[[], str], down: Callable[[], object], final: Callable[[], object]
) -> Iterator[PrivateStore]:
    """A store started by ``up``, stopped by ``down`` between tests steps and by ``final`` at
    the end, also when starting failed half-way (a process may run already)."""
    try:
        url = _blocking(up)
        yield PrivateStore(name, url, _start=up, _stop=down)
    finally:
        _blocking(final)


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivateStore]:
    """A PostgreSQL cluster of its own (database ``gpux``); ``stop`` is a fast shutdown, which
    ends every session as a restart does."""
    with _directory("gpux-pg-") as directory:
        cluster = postgres.Cluster(port=free_port(), directory=directory)
        with _running(
            "postgres",
            lambda: postgres.up(cluster),
            lambda: postgres.down(cluster),
            lambda: postgres.down(cluster, mode="immediate"),
        ) as store:
            yield store


@contextlib.contextmanager
def private_redis() -> Iterator[PrivateStore]:
    """A Redis of its own (no persistence: a restart starts it empty)."""
    with _directory("gpux-redis-") as directory:
        server = redis.Server(port=free_port(), directory=directory)
        down = functools.partial(redis.down, server)
        with _running("redis", functools.partial(redis.up, server), down, down) as store:
            yield store


@contextlib.contextmanager
def private_kafka() -> Iterator[PrivateStore]:
    """A single-node Kafka broker of its own (KRaft; its data survives a restart). Starting one
    takes several seconds, more than the other stores."""
    with _directory("gpux-kafka-") as directory:
        broker = kafka.Broker(port=free_port(), controller_port=free_port(), directory=directory)
        down = functools.partial(kafka.down, broker)
        with _running("kafka", functools.partial(kafka.up, broker), down, down) as store:
            yield store
