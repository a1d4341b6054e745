"""Run a gpux service as its own process (``python -m gpux_<name>``) to kill and restart it.

For crash tests: ``kill()`` sends SIGKILL (no shutdown hook runs, nothing is flushed), and
``start()`` starts the same command again with the same environment. Every run of one
``ServiceProcess`` appends its output to one log file; ``tail()`` shows its end for failure
messages.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import httpx

from gpux_devinfra.testing.services import free_port
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.settings import GpuxSettings


def service_env(settings: GpuxSettings, **overrides: object) -> dict[str, str]:
    """This process's environment plus the session's endpoints and ``GPUX_*`` overrides.

    ``overrides`` are settings by name (``settle_tick_s=0.05`` becomes
    ``GPUX_SETTLE_TICK_S=0.05``); the HTTP port is a free one unless given.
    """
    env = {
        **os.environ,
        "GPUX_ENV": "test",
        "GPUX_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "GPUX_DATABASE_URL": settings.database_url.get_secret_value(),
        "GPUX_REDIS_URL": settings.redis_url,
        "GPUX_NAMESPACE": settings.namespace,
        "GPUX_CONNECT_TIMEOUT_S": "5",
        "GPUX_HTTP_PORT": str(free_port()),
    }
    for name, value in overrides.items():
        env[f"GPUX_{name.upper()}"] = (
            value.isoformat() if hasattr(value, "isoformat") else str(value)
        )
    return env


class ServiceProcess:
    """One service run as ``python -m <module>``; started, SIGKILLed and restarted at will."""

    def __init__(self, module: str, env: Mapping[str, str], log_path: Path) -> None:
        self.module = module
        self.env = dict(env)
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def alive(self) -> bool:
        """Whether the current run is still going."""
        return self.proc is not None and self.proc.poll() is None

    @property
    def url(self) -> str:
        """Where it serves HTTP (``GPUX_HTTP_PORT`` of its environment)."""
        return f"http://127.0.0.1:{self.env['GPUX_HTTP_PORT']}"

    def start(self) -> None:
        """Start (again); the output goes to the end of the log file."""
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start {self.starts} ===\n".encode())
            log.flush()
            self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-m", self.module],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    async def ready(self, timeout_s: float = 90) -> None:
        """Wait until ``/readyz`` answers 200 (Kafka, PostgreSQL and Redis answer it); fails
        with the log's end if the process dies first or the time is up."""
        async with httpx.AsyncClient(base_url=self.url, timeout=2) as client:

            async def answers() -> bool:
                assert self.alive, f"{self.module} exited:\n{self.tail()}"
                try:
                    return (await client.get("/readyz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await eventually(answers, what=f"{self.module} to be ready", timeout_s=timeout_s)

    def kill(self) -> None:
        """SIGKILL the running process and wait for it; it must not have died by itself."""
        assert self.proc is not None
        assert self.proc.poll() is None, f"{self.module} died by itself:\n{self.tail()}"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM if still running, without waiting (``stop`` waits)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        """SIGTERM (then SIGKILL after 15 s) if still running."""
        if self.proc is not None and self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def tail(self, chars: int = 4000) -> str:
        """The end of the log (every run)."""
        return self.log_path.read_text(errors="replace")[-chars:]
