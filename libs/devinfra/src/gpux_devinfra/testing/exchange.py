"""The whole exchange as ``make up`` runs it, on stores a test gives: every service its own
process (the processes, order and role settings of ``gpux_devinfra.exchange``), each on a free
loopback port, under one namespace.

For tests that kill and restart services while the exchange works (the chaos suite): each
process is a ``ServiceProcess`` (SIGKILL, start again with the same environment, one log file
per process across its runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpux_devinfra import exchange as make_up
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.processes import ServiceProcess
from gpux_devinfra.testing.services import free_port

GATEWAY = "gateway"


@dataclass
class ExchangeProcesses:
    """Every process of the exchange by its ``make up`` name (``catalog`` … ``gateway``)."""

    processes: dict[str, ServiceProcess]

    @property
    def url(self) -> str:
        """The public API (the gateway's ``api`` role)."""
        return self.processes[GATEWAY].url

    def start(self) -> None:
        """Start every process, in ``make up``'s order (none waits for another)."""
        for process in self.processes.values():
            process.start()

    async def ready(self, timeout_s: float = 120) -> None:
        """Until every process answers ``/readyz`` with 200."""
        await asyncio.gather(*(p.ready(timeout_s) for p in self.processes.values()))

    def stop(self) -> None:
        """SIGTERM all at once, then wait for each (SIGKILL after 15 s)."""
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            process.stop()

    def dead(self) -> list[str]:
        """The processes that are not running now."""
        return [name for name, process in self.processes.items() if not process.alive]


def exchange_env(
    endpoints: Endpoints, namespace: str, settings: Mapping[str, str]
) -> dict[str, str]:
    """What ``make up`` gives every process, on ``endpoints`` under ``namespace``, with
    ``settings`` (``GPUX_*`` variables) on top."""
    env = make_up.service_env(os.environ, endpoints)
    env.update({"GPUX_NAMESPACE": namespace, **settings})
    return env


@contextlib.contextmanager
def exchange_processes(
    endpoints: Endpoints, namespace: str, log_dir: Path, settings: Mapping[str, str]
) -> Iterator[ExchangeProcesses]:
    """Every process of the exchange, not started yet; all stopped afterwards (also when the
    body fails)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    env = exchange_env(endpoints, namespace, settings)
    processes = {
        service.name: ServiceProcess(
            service.module,
            {**env, **service.env, "GPUX_HTTP_PORT": str(free_port())},
            log_dir / f"{service.name}.log",
        )
        for service in make_up.SERVICES
    }
    exchange = ExchangeProcesses(processes)
    try:
        yield exchange
    finally:
        exchange.stop()
