"""Redis from Debian's packages, run as our own process on loopback (not the system service)."""

from __future__ import annotations

import shutil

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


def _server() -> str:
    found = shutil.which("redis-server")
    if found is None:
        apt_install("redis-server")
        found = shutil.which("redis-server")
    if found is None:
        raise InfraError("redis-server is not on PATH after installing it")
    return found


def answers() -> bool:
    """Whether our Redis answers PING."""
    # Imported here: only `gpux infra` pings Redis, and every other command starts faster.
    import redis  # noqa: PLC0415

    try:
        return bool(redis.Redis(host="127.0.0.1", port=PORT, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def pid() -> int | None:
    """Our Redis's pid when it runs."""
    return read_pid(state_dir() / "redis" / "redis.pid")


def url() -> str:
    """The Redis URL."""
    return f"redis://127.0.0.1:{PORT}/0"


def up() -> str:
    """Start our Redis unless it runs; returns its URL."""
    if pid() is None:
        if port_open(PORT):
            raise InfraError(f"port {PORT} is taken by a process that is not our Redis")
        home = state_dir() / "redis"
        home.mkdir(parents=True, exist_ok=True)
        with console.status("starting Redis"):
            run(
                [
                    _server(),
                    "--port",
                    str(PORT),
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
    wait_until(answers, 30, "Redis")
    return url()


def down() -> bool:
    """Stop our Redis if it runs; returns whether something was stopped."""
    value = pid()
    if value is None:
        return False
    stop_pid(value)
    return True
