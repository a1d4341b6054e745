"""Redis from Debian's packages, run as our own process on loopback (not the system service)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from gpux_devinfra.system import (
    InfraError,
    apt_install,
    console,
    port_open,
    read_pid,
    run,
    state_dir,
    stop_pid,
    wait_until,
)

PORT = 26379


@dataclass(frozen=True)
class Server:
    """One Redis of ours: the port it answers on and the directory of its pid file and log.

    The default is the shared development Redis (``gpux infra``); tests that restart a store
    run a private one on another port and directory (``gpux_devinfra.testing.stores``).
    """

    port: int = PORT
    directory: Path | None = None
    """Where the pid file and the log live (None: ``<state dir>/redis``)."""

    @property
    def home(self) -> Path:
        """The server's directory."""
        return state_dir() / "redis" if self.directory is None else self.directory


SHARED = Server()
"""The development Redis on ``PORT`` under the state directory."""


def _server() -> str:
    found = shutil.which("redis-server")
    if found is None:
        apt_install("redis-server")
        found = shutil.which("redis-server")
    if found is None:
        raise InfraError("redis-server is not on PATH after installing it")
    return found


def answers(server: Server = SHARED) -> bool:
    """Whether our Redis answers PING."""
    # Imported here: only `gpux infra` pings Redis, and every other command starts faster.
    import redis  # noqa: PLC0415

    try:
        client = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=1)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except redis.RedisError:
        return False


def pid(server: Server = SHARED) -> int | None:
    """Our Redis's pid when it runs."""
    return read_pid(server.home / "redis.pid")


def url(server: Server = SHARED) -> str:
    """The Redis URL."""
    return f"redis://127.0.0.1:{server.port}/0"


def up(server: Server = SHARED) -> str:
    """Start our Redis unless it runs; returns its URL."""
    if pid(server) is None:
        if port_open(server.port):
            raise InfraError(f"port {server.port} is taken by a process that is not our Redis")
        home = server.home
        home.mkdir(parents=True, exist_ok=True)
        with console.status("starting Redis"):
            run(
                [
                    _server(),
                    "--port",
                    str(server.port),
                    "--bind",
                    "127.0.0.1",
                    "--daemonize",
                    "yes",
                    "--pidfile",
                    str(home / "redis.pid"),
                    "--dir",
                    str(home),
                    "--logfile",
                    str(home / "redis.log"),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ]
            )
    wait_until(lambda: answers(server), 30, "Redis")
    return url(server)


def down(server: Server = SHARED) -> bool:
    """Stop our Redis if it runs; returns whether something was stopped."""
    value = pid(server)
    if value is None:
        return False
    stop_pid(value)
    return True
